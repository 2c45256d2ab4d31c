// Placing an order, as the shop does it: price it from the catalog, reserve its stock, then write
// it (with its event) and keep the stock for it in one unit of work. Stock reserved for an order
// that is not written goes back. Once per Idempotency-Key is a wrapper (idempotency/idempotent.ts,
// wired in app.ts); what is answered is the transport's (representation.ts).
import type { Principal } from '@platform/auth';
import { Unauthenticated } from '@platform/errors';
import { newId } from '@platform/ids';
import type { StockReservations } from '../stock/reservations';
import { orderEvent } from './events';
import type { Pricing } from './pricing';
import type { OrderRepository, OrderRow, OrderWrites } from './repository';
import type { CreateOrderInput } from './schemas';

export class PlaceOrder {
  constructor(
    private readonly orders: OrderRepository,
    private readonly pricing: Pricing,
    private readonly stock: StockReservations,
  ) {}

  /** `alongside`: what the caller commits with the order (an Idempotency-Key's answer). */
  async place(principal: Principal, input: CreateOrderInput, alongside?: (writes: OrderWrites, order: OrderRow) => Promise<void>): Promise<OrderRow> {
    const priced = await this.pricing.price(input.items);
    const id = newId();
    await this.stock.reserve(id, input.items, priced);
    try {
      return await this.orders.unitOfWork(async (writes) => {
        // The account was deleted (user.deleted) while its token still works: its orders are
        // being canceled, so this one must not be written (its stock goes back below).
        if (await writes.isDeletedUser(principal.userId)) throw new Unauthenticated('The account of this access token no longer exists.');
        await this.stock.keep(writes, id);
        // One clock reading for the order's createdAt and its order.created's time: left to
        // themselves, the event took the transaction's start and the row a later time.
        const createdAt = new Date();
        const order = await writes.create({ id, userId: principal.userId, amount: priced.amount, currency: priced.currency, couponCode: input.couponCode ?? null, reservationKey: id, createdAt, items: priced.items });
        await writes.recordEvent(orderEvent('order.created', order, order.createdAt));
        await alongside?.(writes, order);
        return order;
      });
    } catch (error) {
      // Stock was taken but the order was not written: give the stock back.
      await this.stock.release(id, 'order write failed after reserving');
      throw error;
    }
  }
}
