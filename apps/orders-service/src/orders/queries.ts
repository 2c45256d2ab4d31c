// Reading orders and their items: who sees which order (owner or admin), filters, paging. Rows
// come back as rows (a list in its paging envelope); representation.ts maps them for clients.
import { assertOwnerOrAdmin, isAdmin, type Principal } from '@platform/auth';
import { Forbidden, Invalid, NotFound } from '@platform/errors';
import { isId } from '@platform/ids';
import { type ListEnvelope, parseSort, type PagingParams, toListEnvelope, toPageRequest } from '@platform/paging';
import { daySpan, pathId } from '@platform/validation';
import { type OrderFilters, type OrderItemRow, type OrderRepository, type OrderRow } from './repository';
import { type OrderSearch, orderSortFields } from './schemas';

type OrderConditions = Omit<OrderSearch, 'size' | 'cursor' | 'page' | 'offset' | 'limit' | 'withTotal' | 'sort'>;

export class OrderQueries {
  constructor(
    private readonly orders: OrderRepository,
    private readonly cursorSecret: string,
  ) {}

  /** The order, if the principal may see it; someone else's order is 404. GraphQL (`order(id:)`, `orders(after:)`) sends ids unchecked, so a malformed one is answered here too. */
  async get(principal: Principal, id: string): Promise<OrderRow> {
    const order = await this.orders.findById(pathId(id, 'Order'));
    if (!order) throw NotFound.of('Order');
    // An order whose customer deleted their account belongs to no one but the admins.
    assertOwnerOrAdmin(principal, order.userId ?? '', 'Order');
    return order;
  }

  /** The orders among `ids` the principal may see (GraphQL references, batched). */
  async getMany(principal: Principal, ids: readonly string[]): Promise<Map<string, OrderRow>> {
    const rows = await this.orders.findByIds(ids.filter(isId));
    return new Map(rows.filter((row) => isAdmin(principal) || row.userId === principal.userId).map((row) => [row.id, row]));
  }

  /** The page; its `totalCount` is flagged as an estimate when more than EXACT_COUNT_LIMIT orders match. */
  async list(principal: Principal, search: OrderSearch): Promise<ListEnvelope<OrderRow>> {
    const { size, cursor, page: pageNumber, offset, limit, withTotal, sort: sortParam, ...conditions } = search;
    if (conditions.userId && !isAdmin(principal) && conditions.userId !== principal.userId) throw new Forbidden("Customers can list only their own orders; leave out userId or send your own.");
    const filters = this.filtersOf(principal, conditions);
    const sort = parseSort(sortParam, orderSortFields, { field: 'createdAt', direction: 'desc' });
    const paging: PagingParams = { size, cursor, page: pageNumber, offset, limit, withTotal };
    const pageRequest = toPageRequest(paging, { list: 'orders', sort, filters, secret: this.cursorSecret });
    const { rows, total } = await this.orders.list(filters, pageRequest);
    return toListEnvelope(rows, pageRequest, { secret: this.cursorSecret, sortValue: (row) => row[sort.field], totalCount: total });
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

  async items(principal: Principal, orderId: string, paging: PagingParams & { sort?: string }): Promise<ListEnvelope<OrderItemRow>> {
    const order = await this.get(principal, orderId);
    const sort = parseSort(paging.sort, ['id'] as const, { field: 'id', direction: 'asc' });
    const page = toPageRequest(paging, { list: `items:${order.id}`, sort, secret: this.cursorSecret });
    const { rows, total } = await this.orders.listItems(order.id, page);
    return toListEnvelope(rows, page, { secret: this.cursorSecret, sortValue: (row) => row.id, totalCount: total });
  }

  /** The item, its id as GET /order-items/{id} checked it (one that is no UUID was answered 404 there). */
  async item(principal: Principal, itemId: string): Promise<OrderItemRow> {
    const item = await this.orders.findItem(itemId);
    if (!item) throw NotFound.of('Order item');
    assertOwnerOrAdmin(principal, item.order.userId ?? '', 'Order item');
    const { order: _order, ...row } = item;
    return row;
  }

  private filtersOf(principal: Principal, conditions: OrderConditions): OrderFilters {
    if (conditions.from && conditions.to && conditions.from > conditions.to) throw new Invalid('The date range is empty.', [{ field: 'from', code: 'OUT_OF_RANGE', message: 'from must not be after to.' }]);
    const days = daySpan(conditions.from, conditions.to);
    return {
      // A customer always sees only their own orders, whatever else they ask.
      userId: isAdmin(principal) ? conditions.userId : principal.userId,
      ids: conditions.ids?.filter(isId),
      // Each status once: a list naming one 40,000 times (a search body may) was as many SQL parameters.
      statuses: conditions.status && [...new Set(conditions.status)],
      createdFrom: days.from,
      createdBefore: days.before,
      minAmount: conditions.minAmount,
      hasCoupon: conditions.hasCoupon,
      productNameContains: conditions.q,
    };
  }
}
