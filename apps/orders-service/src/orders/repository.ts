// Prisma queries of orders and their items and shipments.
import { type DomainEvent, recordEvent, unitOfWork } from '@platform/events';
import { countMatching, keywordLookup, nameFragmentsOf } from '@platform/db';
import { findKeysetPage, type PageRequest, type TotalCount } from '@platform/paging';
import { Prisma, type PrismaClient } from '../generated/prisma/client';
import { IdempotencyKeyRepository } from '../idempotency/repository';
import { ReservationLedger } from '../stock/repository';
import { type OrderStatus, orderStatuses } from './status';

const withChildren = { items: { orderBy: { id: 'asc' } }, shipment: true } as const satisfies Prisma.OrderInclude;

/** An order as stored, with its items (by id) and its shipment once there is one. */
export interface OrderRow {
  id: string;
  /** Null once the customer deleted their account. */
  userId: string | null;
  status: OrderStatus;
  /** In the smallest unit of `currency`: the sum of the items. */
  amount: number;
  currency: string;
  couponCode: string | null;
  /** The id inventory holds this order's stock under. */
  reservationKey: string;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  canceledAt: Date | null;
  items: OrderItemRow[];
  shipment: ShipmentRow | null;
}

/** Compiles only when `Names` is empty; otherwise the error names them ("Type '"giftMessage"' does not satisfy the constraint 'never'"). */
type NoneMissing<Names extends never> = Names;

/**
 * Columns of `orders` the record leaves out on purpose: `q`'s search columns, which only this
 * repository writes and reads. Any other column must be in `OrderRow` (and any column of
 * `order_items` in `OrderItemRow`), or the checks below fail to compile, naming it
 * (docs/adding-a-field.md, step 1). They are exported only so that they count as used.
 */
type OrderColumnsNotInTheRecord = 'productNames' | 'nameFragments';
type OrderColumnsMissingFromTheRecord = Exclude<keyof Prisma.OrderGetPayload<object>, keyof OrderRow | OrderColumnsNotInTheRecord>;
export type EveryOrderColumnIsInTheRecord = NoneMissing<OrderColumnsMissingFromTheRecord>;
type ItemColumnsMissingFromTheRecord = Exclude<keyof Prisma.OrderItemGetPayload<object>, keyof OrderItemRow>;
export type EveryItemColumnIsInTheRecord = NoneMissing<ItemColumnsMissingFromTheRecord>;

export interface OrderItemRow {
  id: string;
  orderId: string;
  productId: string;
  sku: string;
  /** The product's name when ordered. */
  productName: string;
  quantity: number;
  /** In the smallest unit of the order's currency, as are amounts. */
  unitPrice: number;
  amount: number;
}

export interface ShipmentRow {
  orderId: string;
  status: 'PREPARING' | 'SHIPPED' | 'DELIVERED';
  carrier: string | null;
  trackingNumber: string | null;
  shippedAt: Date | null;
  updatedAt: Date;
}

export interface OrderFilters {
  userId?: string;
  ids?: string[];
  statuses?: OrderStatus[];
  createdFrom?: Date;
  createdBefore?: Date;
  minAmount?: number;
  hasCoupon?: boolean;
  productNameContains?: string;
}

export interface NewOrder {
  id: string;
  userId: string;
  amount: number;
  currency: string;
  couponCode: string | null;
  reservationKey: string;
  /** When it was placed: the use case's one clock reading, which its order.created carries too. */
  createdAt: Date;
  items: NewOrderItem[];
}

export interface NewOrderItem {
  id: string;
  productId: string;
  sku: string;
  productName: string;
  quantity: number;
  unitPrice: number;
  amount: number;
}

/** What a versioned update may change; fields left out keep their value. */
export interface OrderChanges {
  status?: OrderStatus;
  couponCode?: string | null;
  canceledAt?: Date;
  amount?: number;
  currency?: string;
  reservationKey?: string;
}

export interface ShipmentChanges {
  status: 'PREPARING' | 'SHIPPED' | 'DELIVERED';
  carrier?: string | null;
  trackingNumber?: string | null;
  shippedAt: Date | null;
}

function whereOf(filters: OrderFilters): Prisma.OrderWhereInput {
  return {
    userId: filters.userId,
    id: filters.ids ? { in: filters.ids } : undefined,
    status: filters.statuses ? { in: filters.statuses } : undefined,
    createdAt: filters.createdFrom || filters.createdBefore ? { gte: filters.createdFrom, lt: filters.createdBefore } : undefined,
    amount: filters.minAmount !== undefined ? { gte: filters.minAmount } : undefined,
    couponCode: filters.hasCoupon === undefined ? undefined : filters.hasCoupon ? { not: null } : null,
    ...keywordCondition(filters.productNameContains),
  };
}

/** `q`: the product names of an order's items, any case (`keywordLookup`, in @platform/db). */
function keywordCondition(keyword: string | undefined): Prisma.OrderWhereInput {
  const { contains, fragments } = keywordLookup(keyword);
  return {
    nameFragments: fragments ? { hasEvery: fragments } : undefined,
    productNames: contains !== undefined ? { contains, mode: 'insensitive' } : undefined,
  };
}

/** The same filters as `whereOf`, in SQL, for the count and the estimate Prisma cannot write. */
function sqlConditionsOf(filters: OrderFilters, firstParam = 0): { where: string; params: unknown[] } {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const condition = (sql: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    conditions.push(sql(`$${firstParam + params.length}`));
  };
  if (filters.userId !== undefined) condition((p) => `user_id = ${p}::uuid`, filters.userId);
  if (filters.ids !== undefined) condition((p) => `id = ANY(${p}::uuid[])`, filters.ids);
  if (filters.statuses !== undefined) {
    condition((p) => `status = ANY(${p}::text[]::"OrderStatus"[])`, filters.statuses);
    // The same as a range of the enum's order, which PostgreSQL 15 checks inside an ordered index
    // scan (it checks `= ANY` of two or more only after reading the row).
    const positions = filters.statuses.map((status) => orderStatuses.indexOf(status));
    if (positions.length > 0) condition((p) => `status >= ${p}::"OrderStatus"`, orderStatuses[Math.min(...positions)]);
    if (positions.length > 0) condition((p) => `status <= ${p}::"OrderStatus"`, orderStatuses[Math.max(...positions)]);
  }
  if (filters.createdFrom !== undefined) condition((p) => `created_at >= ${p}::timestamptz`, filters.createdFrom.toISOString());
  if (filters.createdBefore !== undefined) condition((p) => `created_at < ${p}::timestamptz`, filters.createdBefore.toISOString());
  if (filters.minAmount !== undefined) condition((p) => `amount >= ${p}::int`, filters.minAmount);
  if (filters.hasCoupon !== undefined) conditions.push(filters.hasCoupon ? 'coupon_code IS NOT NULL' : 'coupon_code IS NULL');
  const { contains, fragments } = keywordLookup(filters.productNameContains);
  if (fragments) condition((p) => `name_fragments @> ${p}::text[]`, fragments);
  if (contains !== undefined) condition((p) => `product_names ILIKE '%' || ${p} || '%'`, contains);
  return { where: conditions.join(' AND '), params };
}

/**
 * The first key of the advisory locks (pg_advisory_xact_lock(int, int)) that order a user's
 * placements against the recording of their deletion; the second is a hash of the user's id.
 * Placements share it, recording a deletion takes it alone: the deletion waits for the
 * placements under way to commit (so the cancellation that follows sees their orders), and a
 * placement that comes after it sees the user deleted.
 */
const USER_DELETION_LOCK = 0x6f726472; // "ordr" in ASCII

/** The bounds of a `q` page's steps (`OrderRepository.keywordPageIds`). */
/** Orders checked per row of the page in the first step: 1,000 for a page of 20, 5,000 for 100. */
const KEYWORD_WINDOW_PER_ROW = 50;
const KEYWORD_MATCHES_CAP = 5_000;
const KEYWORD_WALK_CAP = 200_000;

/** What an order stores of its items' names for `q`: the names, one a line, and their short pieces. */
function searchableNamesOf(items: readonly NewOrderItem[]): { productNames: string; nameFragments: string[] } {
  const names = items.map((item) => item.productName);
  return { productNames: names.join('\n'), nameFragments: nameFragmentsOf(names) };
}

export class OrderRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Runs `work` as one transaction: everything it writes through `OrderWrites` commits together,
   * or nothing does when it throws.
   */
  unitOfWork<T>(work: (writes: OrderWrites) => Promise<T>): Promise<T> {
    return unitOfWork(this.prisma, (tx) => work(new OrderWrites(tx)));
  }

  findById(id: string): Promise<OrderRow | null> {
    return this.prisma.order.findUnique({ where: { id }, include: withChildren });
  }

  /** The order's status now; undefined when it is gone. */
  async statusOf(id: string): Promise<OrderStatus | undefined> {
    return (await this.prisma.order.findUnique({ where: { id }, select: { status: true } }))?.status;
  }

  findByIds(ids: readonly string[]): Promise<OrderRow[]> {
    return this.prisma.order.findMany({ where: { id: { in: [...ids] } }, include: withChildren });
  }

  async delete(id: string, version: number): Promise<boolean> {
    const { count } = await this.prisma.order.deleteMany({ where: { id, version } });
    return count === 1;
  }

  /**
   * A page in two steps: the ids, then those orders with their children. Without `q` the ids come
   * from an index-only scan of the keyset index, whose trailing columns are the filters, so
   * non-matching orders are skipped without reading the table. With `q`, see `keywordPageIds`.
   * Both steps run beside the count (`withTotal`), which takes as long as the ids on its own.
   */
  async list(filters: OrderFilters, page: PageRequest): Promise<{ rows: OrderRow[]; total?: TotalCount }> {
    const where = whereOf(filters);
    return findKeysetPage(page, {
      find: async (keyset) => {
        const ids = filters.productNameContains
          ? await this.keywordPageIds(filters, page)
          : await this.prisma.order.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip, select: { id: true } });
        if (ids.length === 0) return [];
        const byId = new Map((await this.findByIds(ids.map((row) => row.id))).map((row) => [row.id, row]));
        // An order deleted between the two steps is left out of this page.
        return ids.flatMap((row) => byId.get(row.id) ?? []);
      },
      count: () => countMatching(this.prisma, { table: 'orders', ...sqlConditionsOf(filters) }),
    });
  }

  /**
   * The ids of a page with `q`, at a cost bounded whatever the keyword, without leaning on the
   * planner's guess of how common it is (left to itself, PostgreSQL walked the sort index for a
   * keyword it took for common and read the whole table when it matched nothing: seconds at
   * 1,000,000 orders). In turn, each step only when the one before could not fill the page:
   * 1. the newest (in sort order) KEYWORD_WINDOW_PER_ROW orders per row of the page passing the
   *    other filters are checked for the keyword: a common keyword fills the page here (a window
   *    in proportion to the page, so that a keyword common enough for a page of 20 fills a page
   *    of 100 too, in one walk);
   * 2. the keyword's index collects up to KEYWORD_MATCHES_CAP matches: fewer means that is all of
   *    them (a rare keyword), and they are sorted;
   * 3. more means the keyword is common enough that walking the sort order finds the page within
   *    a few thousand orders, bounded by KEYWORD_WALK_CAP; only past that are all matches sorted.
   * A walk reads each order it checks from the table (the names are not in the sort index), so
   * with several statuses it walks each status's orders apart and merges them in sort order: the
   * index then skips the other statuses' orders, which a walk over the statuses' range would
   * read from the table only to drop (a third of the reads for `PENDING,SHIPPED`).
   */
  private async keywordPageIds(filters: OrderFilters, page: PageRequest): Promise<{ id: string }[]> {
    const column = page.sort.field === 'amount' ? 'amount' : 'created_at';
    const direction = page.sort.direction === 'desc' ? 'DESC' : 'ASC';
    const orderBy = `ORDER BY ${column} ${direction}, id ${direction}`;
    const wanted = page.take + 1;
    /** `scope`'s conditions and the keyset's, in SQL, with their parameters (a query must use each one it is sent). */
    const conditionsOf = (scope: OrderFilters) => {
      const { where, params } = sqlConditionsOf(scope);
      const conditions = where ? [where] : [];
      if (page.after) {
        params.push(page.after.value instanceof Date ? page.after.value.toISOString() : page.after.value, page.after.id);
        const value = `$${params.length - 1}::${column === 'amount' ? 'int' : 'timestamptz'}`;
        conditions.push(`(${column}, id) ${direction === 'DESC' ? '<' : '>'} (${value}, $${params.length}::uuid)`);
      }
      return { conditions, params };
    };
    const statuses = filters.statuses && [...new Set(filters.statuses)];
    const apart = statuses !== undefined && statuses.length > 1;
    const walked = conditionsOf({ ...filters, statuses: apart ? undefined : statuses, productNameContains: undefined });
    const statusParams = apart ? statuses.map((status, i) => ({ status, placeholder: `$${walked.params.length + i + 1}` })) : [];
    const keyword = sqlConditionsOf({ productNameContains: filters.productNameContains }, walked.params.length + statusParams.length);
    const walkParams = [...walked.params, ...statusParams.map(({ status }) => status), ...keyword.params];
    const recent = (conditions: string[], window: number) =>
      `SELECT id, ${column}, product_names, name_fragments FROM orders${conditions.length ? ` WHERE ${conditions.join(' AND ')}` : ''} ${orderBy} LIMIT ${window}`;
    const walk = (window: number) =>
      this.prisma.$queryRawUnsafe<{ id: string }[]>(
        `SELECT id FROM (${
          apart
            ? `${statusParams.map(({ placeholder }) => `(${recent([`status = ${placeholder}::"OrderStatus"`, ...walked.conditions], window)})`).join(' UNION ALL ')} ${orderBy} LIMIT ${window}`
            : recent(walked.conditions, window)
        }) AS recent WHERE ${keyword.where} ${orderBy} LIMIT ${wanted}`,
        ...walkParams,
      );
    const every = conditionsOf(filters);
    const all = every.conditions.join(' AND ');
    if (page.skip === 0) {
      const window = KEYWORD_WINDOW_PER_ROW * page.take;
      const first = await walk(window);
      if (first.length === wanted) return first;
      // Matches in the window foretell how far the walk must go: when that is within the cap,
      // walk there at once (twice as far, for luck) instead of collecting matches first.
      const foretold = first.length > 0 ? Math.ceil((wanted / first.length) * window * 2) : Infinity;
      if (foretold <= KEYWORD_WALK_CAP / 4) {
        const further = await walk(foretold);
        if (further.length === wanted) return further;
      }
      // A MATERIALIZED query is planned for all its rows (so through the keyword's index when the
      // keyword is selective) and read only as far as the cap.
      const collected = await this.prisma.$queryRawUnsafe<{ id: string; collected: number }[]>(
        `WITH matching AS MATERIALIZED (SELECT id, ${column} FROM orders WHERE ${all}), capped AS (SELECT * FROM matching LIMIT ${KEYWORD_MATCHES_CAP})
         SELECT id, (SELECT count(*)::int FROM capped) AS collected FROM capped ${orderBy} LIMIT ${wanted}`,
        ...every.params,
      );
      if (collected.length === 0 || collected[0].collected < KEYWORD_MATCHES_CAP) return collected.map(({ id }) => ({ id }));
      const longest = await walk(KEYWORD_WALK_CAP);
      if (longest.length === wanted) return longest;
    }
    return this.prisma.$queryRawUnsafe<{ id: string }[]>(
      `WITH matching AS MATERIALIZED (SELECT id, ${column} FROM orders WHERE ${all}) SELECT id FROM matching ${orderBy} LIMIT ${wanted} OFFSET ${page.skip}`,
      ...every.params,
    );
  }


  /**
   * Records that the user deleted their account, once the placements of theirs under way have
   * committed; from then on `OrderWrites.isDeletedUser` refuses them. Recording it again changes nothing.
   */
  async recordDeletedUser(userId: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${USER_DELETION_LOCK}::int, hashtext(${userId}::text))`;
      await tx.deletedUser.createMany({ data: [{ userId }], skipDuplicates: true });
    });
  }

  /** The ids of a user's orders in `statuses`. */
  async idsOfUser(userId: string, statuses: OrderStatus[]): Promise<string[]> {
    return (await this.prisma.order.findMany({ where: { userId, status: { in: statuses } }, select: { id: true } })).map((order) => order.id);
  }

  findItem(id: string): Promise<(OrderItemRow & { order: { userId: string | null } }) | null> {
    return this.prisma.orderItem.findUnique({ where: { id }, include: { order: { select: { userId: true } } } });
  }

  async listItems(orderId: string, page: PageRequest): Promise<{ rows: OrderItemRow[]; total?: number }> {
    return findKeysetPage(page, {
      find: (keyset) => this.prisma.orderItem.findMany({ where: { AND: [{ orderId }, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip }),
      count: () => this.prisma.orderItem.count({ where: { orderId } }),
    });
  }

}

/**
 * The writes of one unit of work (`OrderRepository.unitOfWork`): they commit together or not at
 * all. Besides the order's own, the stock bookkeeping and the Idempotency-Keys of the same
 * database, so that an order and its reservation's end, or its key's stored answer, exist together.
 */
export class OrderWrites {
  /** The pending releases (stock/repository.ts), in this unit of work. */
  readonly reservations: ReservationLedger;
  /** The Idempotency-Keys (idempotency/repository.ts), in this unit of work. */
  readonly idempotencyKeys: IdempotencyKeyRepository;

  constructor(private readonly tx: Prisma.TransactionClient) {
    this.reservations = new ReservationLedger(tx);
    this.idempotencyKeys = new IdempotencyKeyRepository(tx);
  }

  /** The order, its items and its shipment, written together. */
  async create(order: NewOrder): Promise<OrderRow> {
    const { items, ...fields } = order;
    await this.tx.order.create({ data: { ...fields, ...searchableNamesOf(items), shipment: { create: {} } } });
    await this.tx.orderItem.createMany({ data: items.map((item) => ({ ...item, orderId: order.id })) });
    return this.tx.order.findUniqueOrThrow({ where: { id: order.id }, include: withChildren });
  }

  /** The order as this unit of work sees it. */
  findById(id: string): Promise<OrderRow> {
    return this.tx.order.findUniqueOrThrow({ where: { id }, include: withChildren });
  }

  /** Deletes only at the expected version; false when another write got there first. */
  async deleteAtVersion(id: string, version: number): Promise<boolean> {
    const { count } = await this.tx.order.deleteMany({ where: { id, version } });
    return count === 1;
  }

  /**
   * Updates only at the expected version; false when another write got there first. `at`: the
   * use case's one clock reading, the order's updatedAt and the time of the event it records.
   */
  async updateAtVersion(id: string, version: number, changes: OrderChanges, at: Date): Promise<boolean> {
    const { count } = await this.tx.order.updateMany({ where: { id, version }, data: { ...changes, version: { increment: 1 }, updatedAt: at } });
    return count === 1;
  }

  /** `at`: the use case's clock reading, as its updateAtVersion wrote it (Prisma would stamp a later one). */
  async replaceItems(orderId: string, items: NewOrderItem[], at: Date): Promise<void> {
    await this.tx.orderItem.deleteMany({ where: { orderId } });
    await this.tx.orderItem.createMany({ data: items.map((item) => ({ ...item, orderId })) });
    await this.tx.order.update({ where: { id: orderId }, data: { ...searchableNamesOf(items), updatedAt: at } });
  }

  async upsertShipment(orderId: string, shipment: ShipmentChanges): Promise<void> {
    await this.tx.shipment.upsert({ where: { orderId }, create: { orderId, ...shipment }, update: shipment });
  }

  /**
   * Whether the user deleted their account (`OrderRepository.recordDeletedUser`). Holds the user's
   * placement lock, shared, until this unit of work ends: a deletion being recorded is waited for,
   * and one recorded later waits for this unit of work, whose order its cancellation then finds.
   */
  async isDeletedUser(userId: string): Promise<boolean> {
    await this.tx.$executeRaw`SELECT pg_advisory_xact_lock_shared(${USER_DELETION_LOCK}::int, hashtext(${userId}::text))`;
    return (await this.tx.deletedUser.count({ where: { userId } })) > 0;
  }

  /**
   * Removes the link from a deleted user's orders to them (the orders stay, as financial
   * records), moving each one's version as every write does; the ids of the orders it changed.
   */
  async removeUser(userId: string, at: Date): Promise<string[]> {
    return (await this.tx.order.updateManyAndReturn({ where: { userId }, data: { userId: null, version: { increment: 1 }, updatedAt: at }, select: { id: true } })).map((order) => order.id);
  }

  /** The event that tells the other services about this change, committed with it. */
  recordEvent(event: DomainEvent): Promise<void> {
    return recordEvent(this.tx, event);
  }
}
