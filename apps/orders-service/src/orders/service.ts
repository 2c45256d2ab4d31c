// Rules of orders: pricing from the catalog, stock through inventory (all or nothing per order),
// who sees which order, and every status change through the table in status.ts.
import { assertOwnerOrAdmin, isAdmin, type Principal, requireAdmin } from '@platform/auth';
import { ApiError } from '@platform/errors';
import { isId, newId } from '@platform/ids';
import type { InventoryGateway, ReserveOrderResult } from '@platform/inventory-contract';
import { type ListEnvelope, parseSort, type PagingParams, toListEnvelope, toPageRequest } from '@platform/paging';
import { type Logger, remainingMs, updateAtVersion } from '@platform/service-kit';
import type { Catalog } from '../catalog/client';
import { type IdempotencyStore, requestHashOf } from '../idempotency/store';
import { type NewOrder, type OrderFilters, type OrderItemRow, type OrderRepository, type OrderRow } from './repository';
import { etagOf, PLACED_VERSION, toOrderItemResponse, toOrderResponse, type OrderItemResponse, type OrderResponse } from './representation';
import { type CreateOrderInput, type OrderSearch, orderSortFields, type PatchOrderInput, type ReplaceOrderInput, type ShipmentInput } from './schemas';
import { assertTransition, type OrderStatus } from './status';

const MAX_AMOUNT = 2_147_483_647;

interface PricedOrder {
  amount: number;
  currency: string;
  items: NewOrder['items'];
}

/**
 * How long after its request's deadline a placement's stock stays reserved with no order written.
 * Past it the sweeper releases the stock (a crash between Reserve and the order's commit), so
 * stock is whole again within deadline + this margin + one sweep interval.
 */
export const PLACEMENT_MARGIN_MS = 5_000;

function placementDeadline(): Date {
  return new Date(Date.now() + remainingMs() + PLACEMENT_MARGIN_MS);
}

function placementTooLate(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'Placing the order took too long; its stock was released. Retry the request.', { headers: { 'Retry-After': '1' } });
}

export class OrderService {
  constructor(
    private readonly orders: OrderRepository,
    private readonly catalog: Catalog,
    private readonly inventory: InventoryGateway,
    private readonly idempotency: IdempotencyStore,
    private readonly cursorSecret: string,
    private readonly logger: Logger,
  ) {}

  /**
   * Places an order once per Idempotency-Key; a replay returns the first response: its body and
   * its ETag, that of the order as placed (so an If-Match with it fails once the order changed).
   */
  async create(principal: Principal, input: CreateOrderInput, idempotencyKey?: string): Promise<{ order: OrderResponse; etag: string }> {
    const placed = (row: OrderRow) => ({ order: toOrderResponse(row), etag: etagOf(row) });
    if (!idempotencyKey) return placed(await this.place(principal, input));
    const begun = await this.idempotency.begin(principal.userId, idempotencyKey, requestHashOf(input));
    if (begun.kind === 'replay') return { order: begun.body as OrderResponse, etag: etagOf({ version: PLACED_VERSION }) };
    try {
      return placed(await this.place(principal, input, idempotencyKey));
    } catch (error) {
      await this.idempotency.abandon(principal.userId, idempotencyKey);
      throw error;
    }
  }

  private async place(principal: Principal, input: CreateOrderInput, idempotencyKey?: string): Promise<OrderRow> {
    const priced = await this.price(input.items);
    const id = newId();
    await this.orders.recordPlacement(id, placementDeadline());
    await this.reserveAll(id, input.items, priced);
    try {
      return await this.orders.unitOfWork(async (writes) => {
        if (!(await writes.completePlacement(id))) throw placementTooLate();
        const order = await writes.create({ id, userId: principal.userId, amount: priced.amount, currency: priced.currency, couponCode: input.couponCode ?? null, reservationKey: id, items: priced.items });
        if (idempotencyKey) await writes.storeIdempotentResponse(principal.userId, idempotencyKey, 201, toOrderResponse(order));
        return order;
      });
    } catch (error) {
      // Stock was taken but the order was not written: give the stock back.
      await this.release(id, 'order write failed after reserving');
      throw error;
    }
  }

  /** Prices every item from the catalog; the client's idea of the price never counts. */
  private async price(items: CreateOrderInput['items']): Promise<PricedOrder> {
    const products = await this.catalog.productsByIds(items.map((item) => item.productId).filter(isId));
    const unknown = items.flatMap((item, index) => (products.has(item.productId) ? [] : [{ field: `items[${index}].productId`, code: 'NOT_ALLOWED' as const, message: `No product ${item.productId}.` }]));
    if (unknown.length) throw ApiError.unprocessable('Some items name products that do not exist.', unknown);
    const currencies = new Set(items.map((item) => products.get(item.productId)!.currency));
    if (currencies.size > 1) throw ApiError.unprocessable('Items are priced in different currencies.', [{ field: 'items', code: 'NOT_ALLOWED', message: 'All items of an order must be priced in one currency.' }]);
    const priced = items.map((item) => {
      const product = products.get(item.productId)!;
      return { id: newId(), productId: product.id, sku: product.sku, productName: product.name, quantity: item.quantity, unitPrice: product.price, amount: product.price * item.quantity };
    });
    const amount = priced.reduce((sum, item) => sum + item.amount, 0);
    if (amount > MAX_AMOUNT) throw ApiError.unprocessable('The order total is too large.', [{ field: 'items', code: 'OUT_OF_RANGE', message: `The order total must not exceed ${MAX_AMOUNT}.` }]);
    return { amount, currency: [...currencies][0], items: priced };
  }

  /**
   * Reserves every item under `reservationKey` in one ReserveOrder call: inventory takes all of
   * them or none, so a refusal leaves nothing to give back.
   */
  private async reserveAll(reservationKey: string, items: CreateOrderInput['items'], priced: PricedOrder): Promise<void> {
    let result: ReserveOrderResult;
    try {
      result = await this.inventory.reserveOrder(reservationKey, priced.items.map((item) => ({ sku: item.sku, quantity: item.quantity })));
    } catch (error) {
      // Timed out or unanswered: the reservation may still commit after this release, so the
      // sweeper releases again later (Release is idempotent).
      await this.release(reservationKey, 'the reservation failed; its outcome is unknown');
      await this.orders.queueRelease(reservationKey, 'a reservation timed out; its outcome is unknown');
      throw error;
    }
    if (result.kind === 'reserved') return;
    // Refused: inventory took nothing under this key, so its placement has nothing to release.
    await this.orders.releaseDone(reservationKey);
    const refused = new Set(result.skus);
    throw new ApiError('OUT_OF_STOCK', 'Not enough stock for some items; nothing was reserved.', {
      fieldErrors: priced.items.flatMap((item, index) => (refused.has(item.sku) ? [{ field: `items[${index}].quantity`, code: 'OUT_OF_RANGE' as const, message: `Not enough stock of ${items[index].productId}.` }] : [])),
    });
  }

  /**
   * Gives a reservation's stock back. If inventory cannot take it now, the key is written down
   * and the sweeper retries until it can (Release is idempotent), so no stock is ever lost.
   */
  private async release(reservationKey: string, why: string): Promise<void> {
    try {
      await this.inventory.release(reservationKey);
      await this.orders.releaseDone(reservationKey);
    } catch (error) {
      this.logger.warn({ err: error, reservationKey, why }, 'stock release failed; queued for retry');
      await this.orders.queueRelease(reservationKey, why);
    }
  }

  /** The order, if the principal may see it; someone else's order is 404. */
  async get(principal: Principal, id: string): Promise<OrderRow> {
    const order = isId(id) ? await this.orders.findById(id) : null;
    if (!order) throw ApiError.notFound('Order');
    assertOwnerOrAdmin(principal, order.userId, 'Order');
    return order;
  }

  async getMany(principal: Principal, ids: readonly string[]): Promise<Map<string, OrderRow>> {
    const rows = await this.orders.findByIds(ids.filter(isId));
    return new Map(rows.filter((row) => isAdmin(principal) || row.userId === principal.userId).map((row) => [row.id, row]));
  }

  async list(principal: Principal, search: OrderSearch): Promise<ListEnvelope<OrderResponse>> {
    const { size, cursor, page, offset, limit, withTotal, sort: sortParam, ...conditions } = search;
    if (conditions.userId && !isAdmin(principal) && conditions.userId !== principal.userId) throw ApiError.forbidden("Customers can list only their own orders; leave out userId or send your own.");
    const filters = this.filtersOf(principal, conditions);
    const sort = parseSort(sortParam, orderSortFields, { field: 'createdAt', direction: 'desc' });
    const paging: PagingParams = { size, cursor, page, offset, limit, withTotal };
    const pageRequest = toPageRequest(paging, { list: 'orders', sort, filters, secret: this.cursorSecret });
    const { rows, total } = await this.orders.list(filters, pageRequest);
    return toListEnvelope(rows, pageRequest, { secret: this.cursorSecret, toItem: (row) => toOrderResponse(row), sortValue: (row) => row[sort.field], totalCount: total });
  }

  private filtersOf(principal: Principal, conditions: Omit<OrderSearch, 'size' | 'cursor' | 'page' | 'offset' | 'limit' | 'withTotal' | 'sort'>): OrderFilters {
    if (conditions.from && conditions.to && conditions.from > conditions.to) throw ApiError.unprocessable('The date range is empty.', [{ field: 'from', code: 'OUT_OF_RANGE', message: 'from must not be after to.' }]);
    const day = (date: string) => new Date(`${date}T00:00:00.000Z`);
    return {
      // A customer always sees only their own orders, whatever else they ask.
      userId: isAdmin(principal) ? conditions.userId : principal.userId,
      ids: conditions.ids?.filter(isId),
      statuses: conditions.status,
      createdFrom: conditions.from ? day(conditions.from) : undefined,
      createdBefore: conditions.to ? new Date(day(conditions.to).getTime() + 86_400_000) : undefined,
      minAmount: conditions.minAmount,
      hasCoupon: conditions.hasCoupon,
      productNameContains: conditions.q,
    };
  }

  /** Newest orders the principal may see, after the order `afterId` (GraphQL `orders`). */
  async recent(principal: Principal, first: number, afterId?: string): Promise<OrderRow[]> {
    const sort = { field: 'createdAt', direction: 'desc' } as const;
    const page = toPageRequest({ size: Math.max(1, first) }, { list: 'orders', sort, secret: this.cursorSecret });
    if (afterId) {
      const after = await this.get(principal, afterId);
      page.after = { value: after.createdAt, id: after.id };
    }
    const { rows } = await this.orders.list(this.filtersOf(principal, {}), page);
    return rows.slice(0, page.take);
  }

  async patch(principal: Principal, id: string, input: PatchOrderInput, expectedVersion?: number): Promise<OrderRow> {
    const order = await this.get(principal, id);
    const status = await updateAtVersion('order', order.version, expectedVersion, async (version) => {
      const changesStatus = input.status !== undefined && (input.status !== order.status || input.status === 'CANCELED');
      if (changesStatus) {
        // Customers may cancel; moving an order along is the shop's job.
        if (input.status !== 'CANCELED') requireAdmin(principal);
        assertTransition(order.status, input.status!);
      }
      if (input.couponCode !== undefined && order.status !== 'PENDING') throw new ApiError('ORDER_NOT_EDITABLE', 'The coupon can change only while the order is PENDING.');
      const now = new Date();
      const status = input.status ?? order.status;
      return this.orders.unitOfWork(async (writes) => {
        if (!(await writes.updateAtVersion(order.id, version, { status, couponCode: input.couponCode, canceledAt: status === 'CANCELED' ? now : undefined }))) return null;
        if (status === 'SHIPPED' || status === 'DELIVERED') await writes.upsertShipment(order.id, { status, shippedAt: order.shipment?.shippedAt ?? now });
        if (status === 'CANCELED') await writes.queueRelease(order.reservationKey, 'order canceled');
        return status;
      });
    }, { explainLostRace: () => this.explainLostRace(order.id) });
    if (status === 'CANCELED') await this.release(order.reservationKey, 'order canceled');
    return this.get(principal, id);
  }

  async replace(principal: Principal, id: string, input: ReplaceOrderInput, expectedVersion?: number): Promise<OrderRow> {
    const order = await this.get(principal, id);
    await updateAtVersion('order', order.version, expectedVersion, async (version) => {
      if (order.status !== 'PENDING') throw new ApiError('ORDER_NOT_EDITABLE', `The order is ${order.status}; only PENDING orders can be replaced.`);
      const priced = await this.price(input.items);
      // Reserve the new items under a new key first, then swap, then free the old reservation.
      // A fresh key per attempt: a key whose release is still pending is never reserved again.
      const reservationKey = `${order.id}:${newId()}`;
      await this.orders.recordPlacement(reservationKey, placementDeadline());
      await this.reserveAll(reservationKey, input.items, priced);
      let swapped: boolean;
      try {
        swapped = await this.orders.unitOfWork(async (writes) => {
          // Lost to another write: nothing is written yet, and the new reservation goes back below.
          if (!(await writes.updateAtVersion(order.id, version, { amount: priced.amount, currency: priced.currency, couponCode: input.couponCode ?? null, reservationKey }))) return false;
          if (!(await writes.completePlacement(reservationKey))) throw placementTooLate();
          await writes.replaceItems(order.id, priced.items);
          await writes.queueRelease(order.reservationKey, 'replaced items');
          return true;
        });
      } catch (error) {
        await this.release(reservationKey, 'order replace failed after reserving');
        throw error;
      }
      if (!swapped) {
        await this.release(reservationKey, 'order replace lost to another write');
        return null;
      }
      await this.release(order.reservationKey, 'replaced items');
      return true;
    }, { explainLostRace: () => this.explainLostRace(order.id) });
    return this.get(principal, id);
  }

  async delete(principal: Principal, id: string, expectedVersion?: number): Promise<void> {
    const order = await this.get(principal, id);
    await updateAtVersion('order', order.version, expectedVersion, async (version) => {
      // Stock first (idempotent): if inventory cannot take it back now, the order stays and the client retries.
      await this.inventory.release(order.reservationKey);
      return (await this.orders.delete(order.id, version)) ? true : null;
    }, { explainLostRace: () => this.explainLostRace(order.id) });
  }

  async items(principal: Principal, orderId: string, paging: PagingParams & { sort?: string }): Promise<ListEnvelope<OrderItemResponse>> {
    const order = await this.get(principal, orderId);
    const sort = parseSort(paging.sort, ['id'] as const, { field: 'id', direction: 'asc' });
    const page = toPageRequest(paging, { list: `items:${order.id}`, sort, secret: this.cursorSecret });
    const { rows, total } = await this.orders.listItems(order.id, page);
    return toListEnvelope(rows, page, { secret: this.cursorSecret, toItem: toOrderItemResponse, sortValue: (row) => row.id, totalCount: total });
  }

  async item(principal: Principal, itemId: string): Promise<OrderItemRow> {
    const item = isId(itemId) ? await this.orders.findItem(itemId) : null;
    if (!item) throw ApiError.notFound('Order item');
    assertOwnerOrAdmin(principal, item.order.userId, 'Order item');
    const { order: _order, ...row } = item;
    return row;
  }

  /** Admin: creates or replaces the shipment; SHIPPED and DELIVERED move the order along. */
  async putShipment(principal: Principal, orderId: string, input: ShipmentInput): Promise<OrderRow> {
    requireAdmin(principal);
    const order = await this.get(principal, orderId);
    const target: OrderStatus | undefined = input.status === 'PREPARING' ? undefined : input.status;
    if (order.status === 'CANCELED') throw new ApiError('CONFLICT', 'The order is canceled; it has no shipment to change.');
    if (target && target !== order.status) assertTransition(order.status, target);
    const now = new Date();
    await updateAtVersion('order', order.version, undefined, (version) =>
      this.orders.unitOfWork(async (writes) => {
        if (target && target !== order.status && !(await writes.updateAtVersion(order.id, version, { status: target }))) return null;
        await writes.upsertShipment(order.id, {
          status: input.status,
          carrier: input.carrier ?? null,
          trackingNumber: input.trackingNumber ?? null,
          shippedAt: input.status === 'PREPARING' ? null : (order.shipment?.shippedAt ?? now),
        });
        return true;
      }), { explainLostRace: () => this.explainLostRace(order.id) });
    return this.get(principal, orderId);
  }

  /** Cancels for the cancellation worker: same rules as PATCH, no caller to answer. */
  async cancelForCancellation(orderId: string): Promise<'canceled' | 'already-canceled' | 'not-cancelable' | 'gone'> {
    const order = await this.orders.findById(orderId);
    if (!order) return 'gone';
    if (order.status === 'CANCELED') return 'already-canceled';
    try {
      assertTransition(order.status, 'CANCELED');
    } catch {
      return 'not-cancelable';
    }
    const canceled = await this.orders.unitOfWork(async (writes) => {
      if (!(await writes.updateAtVersion(order.id, order.version, { status: 'CANCELED', canceledAt: new Date() }))) return false;
      await writes.queueRelease(order.reservationKey, 'order canceled');
      return true;
    });
    if (!canceled) return this.cancelForCancellation(orderId);
    await this.release(order.reservationKey, 'order canceled');
    return 'canceled';
  }

  /**
   * Retries the releases inventory could not take; returns how many it gave back now. Entries
   * younger than `graceMs` wait, so a Reserve that committed late is released too.
   */
  async releasePendingStock(options: { limit?: number; graceMs?: number; now?: Date } = {}): Promise<number> {
    const now = options.now ?? new Date();
    const dead = await this.orders.expirePlacements(now);
    if (dead) this.logger.warn({ placements: dead }, 'order placements died before writing their order; releasing their stock');
    let released = 0;
    for (const pending of await this.orders.pendingReleases(options.limit ?? 50, new Date(now.getTime() - (options.graceMs ?? 5_000)))) {
      try {
        await this.inventory.release(pending.reservationKey);
        await this.orders.releaseDone(pending.reservationKey);
        released += 1;
      } catch {
        await this.orders.queueRelease(pending.reservationKey, pending.reason); // counts the attempt
        break; // inventory is still away; the next sweep tries again
      }
    }
    return released;
  }

  /** Forgets Idempotency-Keys past their 24 h: the table would otherwise grow forever. */
  purgeExpiredIdempotencyKeys(now?: Date): Promise<number> {
    return this.idempotency.purgeExpired(1_000, now);
  }

  /** Another write changed the order between our read and our write: a cancel says more than "it changed". */
  private async explainLostRace(id: string): Promise<ApiError | undefined> {
    const now = await this.orders.findById(id);
    return now?.status === 'CANCELED' ? new ApiError('ORDER_ALREADY_CANCELED', 'The order is already canceled.') : undefined;
  }
}
