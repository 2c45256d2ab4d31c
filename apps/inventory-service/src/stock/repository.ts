// SQL of stock and reservations. Each reservation operation is one statement, so it is atomic on
// its own and holds the stock rows' locks only for as long as that statement runs. Stock changes
// (SetStock, AdjustStock) are one short transaction with their idempotency record.
import { findKeysetPage, type PageRequest } from '@platform/paging';
import { unchangedAtVersion } from '@platform/service-kit';
import type { PrismaClient } from '../generated/prisma/client';

export type ReserveOutcome =
  | { kind: 'reserved'; reservationId: string; quantity: number; remaining: number }
  | { kind: 'existing'; reservationId: string; quantity: number; remaining: number }
  | { kind: 'unknown-sku' }
  | { kind: 'insufficient'; available: number };

export interface ReserveRequestRow {
  id: string;
  orderId: string;
  quantity: number;
}

interface BatchRow {
  reservation_id: string | null;
  quantity: number | null;
  remaining_after: number | null;
  existed: boolean;
  available_before: number | null;
  available_after: number | null;
}

/** A SKU's stock as stored (on_hand is available + reserved) and how many changes it has seen. */
export interface StockLevelRow {
  sku: string;
  available: number;
  reserved: number;
  version: number;
  updatedAt: Date;
}

export interface OrderLineRow {
  /** The reservation's id if this line is reserved now. */
  id: string;
  sku: string;
  quantity: number;
}

export type ReserveOrderOutcome =
  | { kind: 'reserved'; lines: { reservationId: string; sku: string; quantity: number; remaining: number }[] }
  | { kind: 'unknown-skus'; skus: string[] }
  | { kind: 'insufficient'; lines: { sku: string; requested: number; available: number }[] }
  /** Refused while the order it replaces holds nothing: another replacement took its units, or they went back. */
  | { kind: 'replaced-not-held' };

interface OrderLineResult {
  sku: string;
  quantity: number;
  reservation_id: string | null;
  available_before: number | null;
  available_after: number | null;
  ok: boolean;
  /** What the line takes from `available` (null for a line the order holds already). */
  needed: number | null;
  /** How many reservations the replaced order held (0 without one). */
  replaced_held: number;
}

export interface StockChangeRequest {
  requestId: string;
  sku: string;
  kind: 'SET' | 'ADJUST';
  /** SET: the on_hand asked for; ADJUST: the delta. */
  amount: number;
  reason: string | null;
  /** SET through REST with If-Match: only a row still at this version changes (none is created). */
  expectedVersion?: number;
  /** SET through REST with If-None-Match: *: only a SKU without a row is set (none is replaced). */
  createOnly?: boolean;
}

/**
 * A change applied now, or a repeat of its request id, each as the change left things (a repeat
 * tells what the first application did): `created`, it inserted the SKU's row; `row`, the level
 * with its version and time (undefined for a repeat of a change made before versions were kept).
 */
export interface AppliedStockChange {
  kind: 'applied' | 'repeat';
  level: { sku: string; available: number; reserved: number };
  created: boolean;
  row: StockLevelRow | undefined;
}

/** A stock row as a change's statement left it (the version as its trigger raised it). */
type ChangedLevel = Omit<StockLevelRow, 'sku'> & { created: boolean };

export type StockChangeOutcome =
  | AppliedStockChange
  /** The request_id names an earlier change that was not this one. */
  | { kind: 'request-id-reused' }
  | { kind: 'unknown-sku' }
  /** SET below what is reserved; ADJUST taking more than is available, or past `maxOnHand`. */
  | { kind: 'out-of-bounds'; available: number; reserved: number }
  /** `expectedVersion` was given and the row is at another version, or there is no row. */
  | { kind: 'version-mismatch' }
  /** `createOnly` was given and the SKU has a row. */
  | { kind: 'exists' };

/** Ends a stock change's transaction without keeping anything (its idempotency record included). */
class ChangeRefused {
  constructor(readonly outcome: StockChangeOutcome) {}
}

export class StockRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Reserves a batch of requests on one SKU in one statement: one row lock, one commit. The
   * stock row is locked first (FOR UPDATE), then requests are granted strictly in arrival order
   * while stock lasts (a recursive walk, so a large request that does not fit does not block a
   * small one behind it), so stock never goes below zero. An (order, sku) that already holds a
   * reservation gets it back and takes nothing; so does a repeat within the batch. A concurrent
   * batch on another replica that inserted the same (order, sku) first makes this statement fail
   * on the unique index, taking nothing; the caller runs it again.
   */
  async reserveBatch(sku: string, requests: ReserveRequestRow[]): Promise<ReserveOutcome[]> {
    const rows = await this.prisma.$queryRaw<BatchRow[]>`
      WITH RECURSIVE
      req AS (
        SELECT r.id, r.order_id, r.quantity, r.n
        FROM unnest(${requests.map((r) => r.id)}::uuid[], ${requests.map((r) => r.orderId)}::text[], ${requests.map((r) => r.quantity)}::int[])
          WITH ORDINALITY AS r(id, order_id, quantity, n)
      ),
      stock_row AS (SELECT available FROM stock WHERE sku = ${sku} FOR UPDATE),
      existing AS (SELECT id, order_id, quantity FROM reservations WHERE sku = ${sku} AND order_id IN (SELECT order_id FROM req)),
      fresh AS (
        SELECT id, order_id, quantity, row_number() OVER (ORDER BY n) AS rn
        FROM (SELECT DISTINCT ON (order_id) id, order_id, quantity, n FROM req
              WHERE order_id NOT IN (SELECT order_id FROM existing) ORDER BY order_id, n) AS firsts
      ),
      alloc (rn, remaining, granted) AS (
        SELECT 0::bigint, (SELECT available FROM stock_row), false
        UNION ALL
        SELECT f.rn, CASE WHEN f.quantity <= a.remaining THEN a.remaining - f.quantity ELSE a.remaining END, f.quantity <= a.remaining
        FROM alloc a JOIN fresh f ON f.rn = a.rn + 1
      ),
      granted AS (SELECT f.id, f.order_id, f.quantity, a.remaining FROM fresh f JOIN alloc a ON a.rn = f.rn WHERE a.granted),
      -- Nothing reads it: PostgreSQL runs every data-modifying WITH exactly once, to completion.
      inserted AS (
        INSERT INTO reservations (id, order_id, sku, quantity, status, created_at)
        SELECT id, order_id, ${sku}, quantity, 'RESERVED', now() FROM granted
      ),
      taken AS (
        UPDATE stock SET available = available - t.total, reserved = reserved + t.total, updated_at = now()
        FROM (SELECT coalesce(sum(quantity), 0)::int AS total FROM granted) AS t
        WHERE sku = ${sku} AND t.total > 0
        RETURNING available
      )
      SELECT coalesce(e.id, g.id)::text AS reservation_id,
             coalesce(e.quantity, g.quantity) AS quantity,
             g.remaining::int AS remaining_after,
             e.id IS NOT NULL AS existed,
             (SELECT available FROM stock_row) AS available_before,
             coalesce((SELECT available FROM taken), (SELECT available FROM stock_row)) AS available_after
      FROM req
      LEFT JOIN existing e ON e.order_id = req.order_id
      LEFT JOIN granted g ON g.order_id = req.order_id
      ORDER BY req.n`;
    return rows.map((row) => {
      if (row.reservation_id !== null && row.existed) return { kind: 'existing', reservationId: row.reservation_id, quantity: row.quantity!, remaining: row.available_after ?? 0 };
      if (row.reservation_id !== null) return { kind: 'reserved', reservationId: row.reservation_id, quantity: row.quantity!, remaining: row.remaining_after ?? 0 };
      if (row.available_before === null) return { kind: 'unknown-sku' };
      return { kind: 'insufficient', available: row.available_after ?? row.available_before };
    });
  }

  /**
   * Returns the stock of every reservation the order holds; a repeat finds none left. Of a
   * reservation it replaced (ReserveOrder's `replaces`), it returns what the replacement did not
   * take over: the replacement is kept. A reservation this order replaced is put back as it was,
   * with the units this order took over: the replacement is undone.
   */
  release(orderId: string): Promise<number> {
    return this.endReservations(orderId, 'RELEASED');
  }

  /**
   * The order shipped: its reservations' stock leaves the warehouse, no longer reserved nor on
   * hand (`available` does not change). Returns how many reservations it fulfilled; 0 on a repeat.
   */
  fulfil(orderId: string): Promise<number> {
    return this.endReservations(orderId, 'FULFILLED');
  }

  /**
   * Ends the order's reservations in one statement, and says how many ended.
   *
   * RELEASED ends its RESERVED ones, and its REPLACED ones with their units not handed over (the
   * replacement is kept); and it puts back the reservations the order replaced (REPLACED by it):
   * the units they had handed over stay reserved, as theirs again, and the rest go back to
   * `available` (the replacement is undone).
   *
   * FULFILLED: every unit of the order leaves `reserved` and the warehouse, REPLACED ones too. An
   * order that ships holding a replaced reservation means its replacement lost (the order never
   * took the new key), so the replacement is undone first: its reservations end, and what they
   * took beyond the units handed over goes back to `available`.
   */
  private async endReservations(orderId: string, ending: 'RELEASED' | 'FULFILLED'): Promise<number> {
    const releasing = ending === 'RELEASED';
    const [row] = await this.prisma.$queryRaw<{ ended: number }[]>`
      WITH undone AS MATERIALIZED (
        SELECT id, sku, handed_over FROM reservations
        WHERE ${releasing} AND replaced_by = ${orderId} AND status = 'REPLACED'
          -- Only while the replacement still holds its units: once shipped, it is kept for good.
          AND EXISTS (SELECT 1 FROM reservations x WHERE x.order_id = ${orderId} AND x.status = 'RESERVED')
        ORDER BY id FOR UPDATE
      ), restored AS (
        UPDATE reservations r SET status = 'RESERVED', replaced_by = NULL, handed_over = 0
        FROM undone u WHERE r.id = u.id
        RETURNING u.sku, u.handed_over
      ), superseding AS MATERIALIZED (
        SELECT y.id, y.sku, y.quantity - coalesce(x.handed_over, 0) AS taken
        FROM reservations y
        LEFT JOIN reservations x ON x.order_id = ${orderId} AND x.sku = y.sku AND x.status = 'REPLACED'
        WHERE NOT ${releasing} AND y.status = 'RESERVED'
          AND y.order_id IN (SELECT replaced_by FROM reservations WHERE order_id = ${orderId} AND status = 'REPLACED')
        ORDER BY y.id FOR UPDATE OF y
      ), dropped AS (
        UPDATE reservations r SET status = 'RELEASED', released_at = now()
        FROM superseding s WHERE r.id = s.id
        RETURNING s.sku, s.taken
      ), ended AS (
        UPDATE reservations SET status = ${ending}::"ReservationStatus",
          released_at = CASE WHEN ${releasing} THEN now() END,
          fulfilled_at = CASE WHEN NOT ${releasing} THEN now() END
        WHERE order_id = ${orderId} AND status IN ('RESERVED', 'REPLACED')
        RETURNING sku, CASE WHEN ${releasing} THEN quantity - handed_over ELSE quantity END AS quantity
      ), moved AS (
        -- Per SKU: how many units leave \`reserved\` (off), and how many of them go back to \`available\` (back).
        SELECT sku, sum(off)::int AS off, sum(back)::int AS back FROM (
          SELECT sku, quantity AS off, quantity * ${releasing ? 1 : 0}::int AS back FROM ended
          UNION ALL SELECT sku, -handed_over, -handed_over FROM restored
          UNION ALL SELECT sku, taken, taken FROM dropped
        ) units
        GROUP BY sku
      ), changed AS (
        UPDATE stock s SET available = s.available + m.back, reserved = s.reserved - m.off, updated_at = now()
        FROM moved m WHERE s.sku = m.sku AND (m.off <> 0 OR m.back <> 0)
        RETURNING s.sku
      )
      SELECT count(*)::int AS ended FROM ended`;
    return row.ended;
  }

  /**
   * Reserves every line of one order in one statement, or none. The order's stock rows are
   * locked in SKU order (two orders sharing SKUs never wait on each other in a cycle), lines the
   * order already holds are returned and take nothing, and the rest are taken only if every one
   * fits. A concurrent call for the same order that inserted first makes this statement fail on
   * the unique index, taking nothing; the caller runs it again.
   *
   * `replaces`: the order whose RESERVED reservations these lines replace (an order's items
   * changed). Their units of a SKU count as available to this order's line of that SKU, which
   * takes them over (`handed_over`) and takes only the rest from `available`; they become
   * REPLACED, and what was not handed over stays reserved until their order's Release (see
   * endReservations). So a replacement fits whenever the units it keeps, plus what is free, cover it.
   */
  async reserveOrder(orderId: string, lines: OrderLineRow[], replaces?: string): Promise<ReserveOrderOutcome> {
    const rows = await this.prisma.$queryRaw<OrderLineResult[]>`
      WITH
      req AS (
        SELECT r.id, r.sku, r.quantity, r.n
        FROM unnest(${lines.map((l) => l.id)}::uuid[], ${lines.map((l) => l.sku)}::text[], ${lines.map((l) => l.quantity)}::int[])
          WITH ORDINALITY AS r(id, sku, quantity, n)
      ),
      replaced AS MATERIALIZED (
        SELECT id, sku, quantity FROM reservations
        WHERE order_id = ${replaces ?? null}::text AND status = 'RESERVED'
        ORDER BY id FOR UPDATE
      ),
      locked AS MATERIALIZED (SELECT sku, available FROM stock WHERE sku IN (SELECT sku FROM req) ORDER BY sku FOR UPDATE),
      existing AS (SELECT id, sku, quantity FROM reservations WHERE order_id = ${orderId} AND sku IN (SELECT sku FROM req)),
      fresh AS (
        SELECT req.id, req.sku, req.quantity, l.available,
               least(req.quantity, coalesce(o.quantity, 0)) AS handed,
               greatest(req.quantity - coalesce(o.quantity, 0), 0) AS needed
        FROM req LEFT JOIN locked l ON l.sku = req.sku LEFT JOIN replaced o ON o.sku = req.sku
        WHERE req.sku NOT IN (SELECT sku FROM existing)
      ),
      verdict AS (SELECT coalesce(bool_and(available IS NOT NULL AND needed <= available), true) AS ok FROM fresh),
      -- Nothing reads them: PostgreSQL runs every data-modifying WITH exactly once, to completion.
      inserted AS (
        INSERT INTO reservations (id, order_id, sku, quantity, status, created_at)
        SELECT id, ${orderId}, sku, quantity, 'RESERVED', now() FROM fresh WHERE (SELECT ok FROM verdict)
      ),
      handed AS (
        UPDATE reservations r SET status = 'REPLACED', replaced_by = ${orderId}, handed_over = coalesce(f.handed, 0)
        FROM replaced o LEFT JOIN fresh f ON f.sku = o.sku
        WHERE r.id = o.id AND (SELECT ok FROM verdict) AND EXISTS (SELECT 1 FROM fresh)
      ),
      taken AS (
        UPDATE stock s SET available = s.available - f.needed, reserved = s.reserved + f.needed, updated_at = now()
        FROM fresh f
        WHERE s.sku = f.sku AND (SELECT ok FROM verdict)
        RETURNING s.sku, s.available
      )
      SELECT req.sku,
             coalesce(e.quantity, req.quantity) AS quantity,
             CASE WHEN e.id IS NOT NULL THEN e.id::text WHEN (SELECT ok FROM verdict) THEN req.id::text END AS reservation_id,
             l.available AS available_before,
             coalesce(t.available, l.available) AS available_after,
             (SELECT ok FROM verdict) AS ok,
             f.needed,
             (SELECT count(*) FROM replaced)::int AS replaced_held
      FROM req
      LEFT JOIN existing e ON e.sku = req.sku
      LEFT JOIN locked l ON l.sku = req.sku
      LEFT JOIN taken t ON t.sku = req.sku
      LEFT JOIN fresh f ON f.sku = req.sku
      ORDER BY req.n`;
    if (rows.every((row) => row.ok)) {
      return { kind: 'reserved', lines: rows.map((row) => ({ reservationId: row.reservation_id!, sku: row.sku, quantity: row.quantity, remaining: row.available_after ?? 0 })) };
    }
    const unknown = rows.filter((row) => row.available_before === null).map((row) => row.sku);
    if (unknown.length) return { kind: 'unknown-skus', skus: unknown };
    // A replacement is refused for want of units the order it replaces no longer holds: the caller
    // read that order before another change of it (a concurrent replacement took the units over,
    // or it ended). Short of stock is not the answer; the caller's view is stale.
    if (replaces && rows[0]?.replaced_held === 0) return { kind: 'replaced-not-held' };
    return {
      kind: 'insufficient',
      lines: rows.filter((row) => row.needed !== null && row.needed > row.available_before!).map((row) => ({ sku: row.sku, requested: row.quantity, available: row.available_before! })),
    };
  }

  /** The stock of each of `skus` that exists (in no particular order). */
  findLevels(skus: readonly string[]): Promise<StockLevelRow[]> {
    return this.prisma.$queryRaw<StockLevelRow[]>`SELECT sku, available, reserved, version::float8 AS version, updated_at AS "updatedAt" FROM stock WHERE sku = ANY(${[...skus]}::text[])`;
  }

  /** A page of stock levels in SKU order (the SKU is the key), optionally only `skus`. */
  async listLevels(filter: { skus?: readonly string[] }, page: PageRequest): Promise<{ rows: StockLevelRow[]; total?: number }> {
    const where = filter.skus ? { sku: { in: [...filter.skus] } } : {};
    const select = { sku: true, available: true, reserved: true, version: true, updatedAt: true } as const;
    const { rows, total } = await findKeysetPage(page, {
      column: 'sku',
      key: 'sku',
      find: (keyset) => this.prisma.stock.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip, select }),
      count: () => this.prisma.stock.count({ where }),
    });
    return { rows: rows.map((row) => ({ ...row, version: Number(row.version) })), total };
  }

  /**
   * Applies a SetStock or AdjustStock once per request_id. The request_id is claimed first (a
   * concurrent retry waits on it, then finds it taken), the stock row changes, and the level it
   * left is kept with the claim, all in one transaction: a refusal keeps nothing.
   */
  async applyChange(change: StockChangeRequest, maxOnHand: number): Promise<StockChangeOutcome> {
    try {
      return await this.prisma.$transaction(async (tx) => {
        const claimed = await tx.$executeRaw`
          INSERT INTO stock_changes (request_id, sku, kind, amount, reason, on_hand_after, reserved_after, available_after)
          VALUES (${change.requestId}, ${change.sku}, ${change.kind}::"StockChangeKind", ${change.amount}, ${change.reason}, 0, 0, 0)
          ON CONFLICT (request_id) DO NOTHING`;
        if (claimed === 0) {
          const prior = await tx.stockChange.findUniqueOrThrow({ where: { requestId: change.requestId } });
          const same = prior.sku === change.sku && prior.kind === change.kind && prior.amount === change.amount && prior.reason === change.reason;
          if (!same) return { kind: 'request-id-reused' };
          const level = { sku: prior.sku, available: prior.availableAfter, reserved: prior.reservedAfter };
          // The level's updated_at was set by the change's own statement, at its transaction's now(): created_at.
          const row = prior.versionAfter === null ? undefined : { ...level, version: Number(prior.versionAfter), updatedAt: prior.createdAt };
          return { kind: 'repeat', level, created: prior.createdStock, row };
        }
        // A SET to the on-hand count the level already has changes nothing: no row is written, so
        // its version (the ETag other clients hold for If-Match) stays and no event is recorded,
        // as for every resource's no-op write (service-kit's unchangedAtVersion: a stale If-Match
        // is still 412, and its throw ends the transaction, claim included). The claim keeps the
        // level as found, so a retry answers the same.
        if (change.kind === 'SET') {
          const [current] = await tx.$queryRaw<StockLevelRow[]>`
            SELECT sku, available, reserved, version::float8 AS version, updated_at AS "updatedAt" FROM stock WHERE sku = ${change.sku} FOR UPDATE`;
          if (current && change.createOnly) throw new ChangeRefused({ kind: 'exists' });
          if (current && current.available + current.reserved === change.amount) {
            const row = unchangedAtVersion(current, change.expectedVersion);
            await tx.$executeRaw`
              UPDATE stock_changes SET on_hand_after = ${change.amount}, reserved_after = ${row.reserved}, available_after = ${row.available}, version_after = ${row.version}
              WHERE request_id = ${change.requestId}`;
            return { kind: 'applied', level: { sku: row.sku, available: row.available, reserved: row.reserved }, created: false, row };
          }
        }
        // `created` comes from the write itself: xmax is 0 only on a row version this statement
        // inserted (ON CONFLICT's update sets it), so of two first SETs of a SKU racing, the one
        // whose INSERT won says created and the other, having waited for it, updated.
        const [level] =
          change.kind === 'SET' && change.expectedVersion !== undefined
            ? await tx.$queryRaw<ChangedLevel[]>`
                UPDATE stock SET available = ${change.amount} - reserved, updated_at = now()
                WHERE sku = ${change.sku} AND version = ${change.expectedVersion} AND reserved <= ${change.amount}
                RETURNING available, reserved, version::float8 AS version, updated_at AS "updatedAt", false AS created`
            : change.kind === 'SET' && change.createOnly
            ? // Of two create-only SETs racing for a new SKU, the one whose INSERT loses finds no row here.
              await tx.$queryRaw<ChangedLevel[]>`
                INSERT INTO stock (sku, available, reserved, updated_at) VALUES (${change.sku}, ${change.amount}, 0, now())
                ON CONFLICT (sku) DO NOTHING
                RETURNING available, reserved, version::float8 AS version, updated_at AS "updatedAt", true AS created`
            : change.kind === 'SET'
            ? await tx.$queryRaw<ChangedLevel[]>`
                INSERT INTO stock (sku, available, reserved, updated_at) VALUES (${change.sku}, ${change.amount}, 0, now())
                ON CONFLICT (sku) DO UPDATE SET available = ${change.amount} - stock.reserved, updated_at = now()
                WHERE stock.reserved <= ${change.amount}
                RETURNING available, reserved, version::float8 AS version, updated_at AS "updatedAt", (xmax = 0) AS created`
            : await tx.$queryRaw<ChangedLevel[]>`
                UPDATE stock SET available = available + ${change.amount}, updated_at = now()
                WHERE sku = ${change.sku} AND available + ${change.amount} >= 0 AND available::bigint + reserved + ${change.amount} <= ${maxOnHand}
                RETURNING available, reserved, version::float8 AS version, updated_at AS "updatedAt", false AS created`;
        if (!level) {
          const [current] = await tx.$queryRaw<{ available: number; reserved: number; version: number }[]>`SELECT available, reserved, version::float8 AS version FROM stock WHERE sku = ${change.sku}`;
          if (change.expectedVersion !== undefined && current?.version !== change.expectedVersion) throw new ChangeRefused({ kind: 'version-mismatch' });
          if (change.createOnly && current) throw new ChangeRefused({ kind: 'exists' });
          throw new ChangeRefused(current ? { kind: 'out-of-bounds', available: current.available, reserved: current.reserved } : { kind: 'unknown-sku' });
        }
        await tx.$executeRaw`
          UPDATE stock_changes SET on_hand_after = ${level.available + level.reserved}, reserved_after = ${level.reserved}, available_after = ${level.available}, created_stock = ${level.created}, version_after = ${level.version}
          WHERE request_id = ${change.requestId}`;
        const { created, ...row } = level;
        return { kind: 'applied', level: { sku: change.sku, available: level.available, reserved: level.reserved }, created, row: { sku: change.sku, ...row } };
      });
    } catch (error) {
      if (error instanceof ChangeRefused) return error.outcome;
      throw error;
    }
  }

  async seedIfEmpty(stock: { sku: string; available: number }[]): Promise<number> {
    if ((await this.prisma.stock.count()) > 0) return 0;
    const { count } = await this.prisma.stock.createMany({ data: stock, skipDuplicates: true });
    return count;
  }
}
