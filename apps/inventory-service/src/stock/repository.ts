// SQL of stock and reservations. Each operation is one statement, so it is atomic on its own
// and holds the stock row's lock only for as long as that statement runs.
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

  /** Returns the stock of every RESERVED reservation of the order; a repeat finds none left. */
  async release(orderId: string): Promise<number> {
    const [row] = await this.prisma.$queryRaw<{ released: number }[]>`
      WITH released AS (
        UPDATE reservations SET status = 'RELEASED', released_at = now()
        WHERE order_id = ${orderId} AND status = 'RESERVED'
        RETURNING sku, quantity
      ), totals AS (
        SELECT sku, sum(quantity)::int AS quantity FROM released GROUP BY sku
      ), restocked AS (
        UPDATE stock s SET available = s.available + t.quantity, reserved = s.reserved - t.quantity, updated_at = now()
        FROM totals t WHERE s.sku = t.sku
        RETURNING s.sku
      )
      SELECT count(*)::int AS released FROM released`;
    return row.released;
  }

  findStock(sku: string) {
    return this.prisma.stock.findUnique({ where: { sku } });
  }

  async seedIfEmpty(stock: { sku: string; available: number }[]): Promise<number> {
    if ((await this.prisma.stock.count()) > 0) return 0;
    const { count } = await this.prisma.stock.createMany({ data: stock, skipDuplicates: true });
    return count;
  }
}
