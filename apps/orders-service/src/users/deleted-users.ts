// What orders does when a user deletes their account (the user.deleted event): the deletion is
// recorded first, so that no order of theirs can be placed from then on (placement checks it in
// its transaction, and the record waits for placements under way to commit); then their open
// orders are canceled through the cancel use case (their stock goes back, order.canceled is
// recorded), and every order of theirs loses its link to them and stays, a financial record
// (order.unlinked recorded for each).
// Without the record first, an order placed between the look-up of open orders and the unlinking
// stayed open, unlinked, its stock held. Running it twice changes nothing the second time: the
// record exists, a canceled order is not canceled again, and no order links to the user any more.
import type { CancelOrder } from '../cancellations/cancel-order';
import { recordOrderEvent } from '../orders/events';
import type { OrderRepository } from '../orders/repository';
import { canTransition, orderStatuses } from '../orders/status';

/** The statuses from which an order can still be canceled: the user's open orders. */
const openStatuses = orderStatuses.filter((status) => canTransition(status, 'CANCELED'));

export class DeletedUsers {
  constructor(
    private readonly orders: OrderRepository,
    private readonly cancelOrder: CancelOrder,
  ) {}

  async forget(userId: string): Promise<{ canceled: number; unlinked: number }> {
    await this.orders.recordDeletedUser(userId);
    let canceled = 0;
    for (const orderId of await this.orders.idsOfUser(userId, openStatuses)) {
      const { outcome } = await this.cancelOrder.forCancellation(orderId);
      // Another write kept winning: fail, so the event comes again rather than leaving it open.
      if (outcome === 'contended') throw new Error(`order ${orderId} kept changing while being canceled for a deleted user`);
      if (outcome === 'canceled') canceled++;
    }
    // Each order unlinked records order.unlinked with the unlinking, as every change records its event.
    const unlinked = await this.orders.unitOfWork(async (writes) => {
      // One clock reading for the orders' updatedAt and their order.unlinked's time.
      const at = new Date();
      const orderIds = await writes.removeUser(userId, at);
      for (const orderId of orderIds) await recordOrderEvent(writes, 'order.unlinked', orderId, at);
      return orderIds.length;
    });
    return { canceled, unlinked };
  }
}
