// Changing an order after it was placed: its status and coupon (PATCH), its items (PUT: the new
// stock is reserved in place of the old, then the old is given back), or deleting it (the stock
// it holds given back). Every write is at the version the client read (If-Match); canceling is
// the cancellations' story (CancelOrder).
import { type Principal, requireAdmin } from '@platform/auth';
import { Conflict } from '@platform/errors';
import { unchangedAtVersion } from '@platform/service-kit';
import { domainEvent } from '@platform/events';
import { newId } from '@platform/ids';
import type { CancelOrder } from '../cancellations/cancel-order';
import type { ShipmentService } from '../shipments/service';
import type { StockReservations } from '../stock/reservations';
import { recordOrderEvent, statusEventOf } from './events';
import type { Pricing } from './pricing';
import type { OrderQueries } from './queries';
import type { OrderRepository, OrderRow } from './repository';
import type { PatchOrderInput, ReplaceOrderInput } from './schemas';
import { assertTransition, updateOrderAtVersion } from './status';

export class ChangeOrder {
  constructor(
    private readonly orders: OrderRepository,
    private readonly queries: OrderQueries,
    private readonly pricing: Pricing,
    private readonly stock: StockReservations,
    private readonly cancelOrder: CancelOrder,
    private readonly shipments: ShipmentService,
  ) {}

  async patch(principal: Principal, id: string, input: PatchOrderInput, expectedVersion?: number): Promise<OrderRow> {
    if (input.status === 'CANCELED') return this.cancelOrder.cancel(principal, id, { couponCode: input.couponCode, expectedVersion });
    const order = await this.queries.get(principal, id);
    const moves = input.status !== undefined && input.status !== order.status;
    if (moves) {
      // Moving an order along is the shop's job.
      requireAdmin(principal);
      assertTransition(order.status, input.status!);
    }
    if (input.couponCode !== undefined && order.status !== 'PENDING') throw new Conflict('ORDER_NOT_EDITABLE', 'The coupon can change only while the order is PENDING.');
    // Nothing changes (`{}`, the status or coupon it has).
    if (!moves && (input.couponCode === undefined || input.couponCode === order.couponCode)) return unchangedAtVersion(order, expectedVersion);
    if (moves && (input.status === 'SHIPPED' || input.status === 'DELIVERED')) {
      // Shipping is one step whichever door asks for it (PUT .../shipment takes it too); the
      // carrier and tracking number the shipment has are kept.
      await this.shipments.record(order, { status: input.status }, expectedVersion);
      return this.queries.get(principal, id);
    }
    await updateOrderAtVersion(this.orders, order, expectedVersion, (version) =>
      this.orders.unitOfWork(async (writes) => {
        // One clock reading for the order's updatedAt and its event's time.
        const at = new Date();
        if (!(await writes.updateAtVersion(order.id, version, { status: input.status, couponCode: input.couponCode }, at))) return null;
        const event = moves ? statusEventOf(input.status!) : input.couponCode !== undefined && input.couponCode !== order.couponCode ? 'order.updated' : undefined;
        if (event) await recordOrderEvent(writes, event, order.id, at);
        return true;
      }),
    );
    return this.queries.get(principal, id);
  }

  async replace(principal: Principal, id: string, input: ReplaceOrderInput, expectedVersion?: number): Promise<OrderRow> {
    const order = await this.queries.get(principal, id);
    await updateOrderAtVersion(this.orders, order, expectedVersion, async (version) => {
      if (order.status !== 'PENDING') throw new Conflict('ORDER_NOT_EDITABLE', `The order is ${order.status}; only PENDING orders can be replaced.`);
      const priced = await this.pricing.price(input.items);
      // Reserve the new items under a new key first, in place of the old key's (whose units count
      // as available to them: lowering a quantity needs no spare stock), then swap, then release
      // the old key, which gives back what the new one did not take over. Releasing the new key
      // instead, when the swap is not written, puts the old reservation back as it was.
      // A fresh key per attempt: a key whose release is still pending is never reserved again.
      const reservationKey = `${order.id}:${newId()}`;
      try {
        await this.stock.reserve(reservationKey, input.items, priced, order.reservationKey);
      } catch (error) {
        // The order's reservations are no longer held under the key read: another change of the
        // order (a concurrent PUT) took them over or ended them. Lost to that write, not short of stock.
        if (error instanceof Conflict && error.code === 'CONFLICT') return null;
        throw error;
      }
      let swapped: boolean;
      try {
        swapped = await this.orders.unitOfWork(async (writes) => {
          // Lost to another write: nothing is written yet, and the new reservation goes back below.
          // One clock reading for the order's updatedAt and its order.updated's time.
          const at = new Date();
          if (!(await writes.updateAtVersion(order.id, version, { amount: priced.amount, currency: priced.currency, couponCode: input.couponCode ?? null, reservationKey }, at))) return false;
          await this.stock.keep(writes, reservationKey);
          await writes.replaceItems(order.id, priced.items, at);
          await this.stock.releaseAfterCommit(writes, order.reservationKey, 'replaced items');
          await recordOrderEvent(writes, 'order.updated', order.id, at);
          return true;
        });
      } catch (error) {
        await this.stock.release(reservationKey, 'order replace failed after reserving');
        throw error;
      }
      if (!swapped) {
        await this.stock.release(reservationKey, 'order replace lost to another write');
        return null;
      }
      await this.stock.release(order.reservationKey, 'replaced items');
      return true;
    });
    return this.queries.get(principal, id);
  }

  async delete(principal: Principal, id: string, expectedVersion?: number): Promise<void> {
    const order = await this.queries.get(principal, id);
    // Stock an order still holds goes back with its deletion, queued in the same unit of work as
    // a cancel's: a delete that loses its race to another write gives nothing back (the order
    // stays, holding its stock), and one that wins cannot lose the release to a crash. A shipped
    // or delivered order's units have left the warehouse, and a canceled one's went back already.
    const holdsStock = order.status === 'PENDING' || order.status === 'CONFIRMED';
    const deleted = await updateOrderAtVersion(this.orders, order, expectedVersion, (version) =>
      this.orders.unitOfWork(async (writes) => {
        if (!(await writes.deleteAtVersion(order.id, version))) return null;
        if (holdsStock) await this.stock.releaseAfterCommit(writes, order.reservationKey, 'order deleted');
        // Read once the row went, as every order event's time is the app's clock reading of its change.
        await writes.recordEvent(domainEvent('order.deleted', order.id, { id: order.id, userId: order.userId }, new Date()));
        return true;
      }),
    );
    if (deleted && holdsStock) await this.stock.release(order.reservationKey, 'order deleted');
  }
}
