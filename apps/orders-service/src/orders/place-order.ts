// Placing an order, as a story: price it from the catalog, reserve its stock, write it; once per
// Idempotency-Key. Stock reserved for an order that is not written goes back.
import type { Principal } from '@platform/auth';
import { Unauthenticated } from '@platform/errors';
import { newId } from '@platform/ids';
import { type IdempotencyStore, requestHashOf } from '../idempotency/store';
import { placementTooLate, type StockReservations } from '../stock/reservations';
import { orderEvent } from './events';
import type { Pricing } from './pricing';
import type { OrderRepository, OrderRow } from './repository';
import { toOrderResponse, type OrderResponse } from './representation';
import type { CreateOrderInput } from './schemas';

/** A new order, or the response stored for its Idempotency-Key when the request is a replay. */
export type PlacedOrder = { kind: 'placed'; order: OrderRow } | { kind: 'replayed'; response: OrderResponse };

export class PlaceOrder {
  constructor(
    private readonly orders: OrderRepository,
    private readonly pricing: Pricing,
    private readonly stock: StockReservations,
    private readonly idempotency: IdempotencyStore,
  ) {}

  /** Places an order once per Idempotency-Key; a replay returns the first response. */
  async place(principal: Principal, input: CreateOrderInput, idempotencyKey?: string): Promise<PlacedOrder> {
    if (!idempotencyKey) return { kind: 'placed', order: await this.write(principal, input) };
    const begun = await this.idempotency.begin(principal.userId, idempotencyKey, requestHashOf(input));
    if (begun.kind === 'replay') return { kind: 'replayed', response: begun.body as OrderResponse };
    try {
      return { kind: 'placed', order: await this.write(principal, input, idempotencyKey) };
    } catch (error) {
      await this.idempotency.abandon(principal.userId, idempotencyKey);
      throw error;
    }
  }

  private async write(principal: Principal, input: CreateOrderInput, idempotencyKey?: string): Promise<OrderRow> {
    const priced = await this.pricing.price(input.items);
    const id = newId();
    await this.stock.reserve(id, input.items, priced);
    try {
      return await this.orders.unitOfWork(async (writes) => {
        // The account was deleted (user.deleted) while its token still works: its orders are
        // being canceled, so this one must not be written (its stock goes back below).
        if (await writes.isDeletedUser(principal.userId)) throw new Unauthenticated('The account of this access token no longer exists.');
        if (!(await writes.completePlacement(id))) throw placementTooLate();
        const order = await writes.create({ id, userId: principal.userId, amount: priced.amount, currency: priced.currency, couponCode: input.couponCode ?? null, reservationKey: id, items: priced.items });
        await writes.recordEvent(orderEvent('order.created', order));
        if (idempotencyKey) await writes.storeIdempotentResponse(principal.userId, idempotencyKey, 201, toOrderResponse(order));
        return order;
      });
    } catch (error) {
      // Stock was taken but the order was not written: give the stock back.
      await this.stock.release(id, 'order write failed after reserving');
      throw error;
    }
  }
}
