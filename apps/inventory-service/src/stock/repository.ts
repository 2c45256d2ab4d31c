// SQL of stock and reservations. Each operation is one statement, so it is atomic on its own
// and holds the stock row's lock only for as long as that statement runs.
import { Prisma, type PrismaClient } from '../generated/prisma/client';

export type ReserveOutcome =
  | { kind: 'reserved'; reservationId: string; quantity: number; remaining: number }
  | { kind: 'existing'; reservationId: string; quantity: number; remaining: number }
  | { kind: 'unknown-sku' }
  | { kind: 'insufficient'; available: number };

interface ReserveRow {
  reservation_id: string | null;
  remaining: number | null;
  existing_id: string | null;
  existing_quantity: number | null;
  current_available: number | null;
}

/** Unique violations arrive as P2002 from model queries and as a wrapped driver error from raw SQL. */
function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError)) return false;
  return error.code === 'P2002' || /23505|UniqueConstraintViolation/.test(JSON.stringify(error.meta ?? {}) + error.message);
}

export class StockRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Takes stock only when enough is available (the UPDATE re-checks `available >= quantity` on
   * the locked row, so concurrent reserves can never take it below zero) and only when this
   * (order, sku) has no reservation yet. The insert of the reservation is part of the same
   * statement: a concurrent duplicate fails on the unique index and takes nothing.
   */
  async reserve(input: { id: string; orderId: string; sku: string; quantity: number }): Promise<ReserveOutcome> {
    const { id, orderId, sku, quantity } = input;
    let row: ReserveRow;
    try {
      [row] = await this.prisma.$queryRaw<ReserveRow[]>`
        WITH existing AS (
          SELECT id, quantity FROM reservations WHERE order_id = ${orderId} AND sku = ${sku}
        ), taken AS (
          UPDATE stock SET available = available - ${quantity}::int, reserved = reserved + ${quantity}::int, updated_at = now()
          WHERE sku = ${sku} AND available >= ${quantity}::int AND NOT EXISTS (SELECT 1 FROM existing)
          RETURNING available
        ), inserted AS (
          INSERT INTO reservations (id, order_id, sku, quantity, status, created_at)
          SELECT ${id}::uuid, ${orderId}, ${sku}, ${quantity}::int, 'RESERVED', now() FROM taken
          RETURNING id
        )
        SELECT (SELECT id::text FROM inserted) AS reservation_id,
               (SELECT available FROM taken) AS remaining,
               (SELECT id::text FROM existing) AS existing_id,
               (SELECT quantity FROM existing) AS existing_quantity,
               (SELECT available FROM stock WHERE sku = ${sku}) AS current_available`;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // A concurrent call for the same (order, sku) won; answer with its reservation.
      return this.existingOutcome(orderId, sku);
    }
    if (row.reservation_id !== null && row.remaining !== null) return { kind: 'reserved', reservationId: row.reservation_id, quantity, remaining: row.remaining };
    if (row.existing_id !== null) return { kind: 'existing', reservationId: row.existing_id, quantity: row.existing_quantity ?? quantity, remaining: row.current_available ?? 0 };
    if (row.current_available === null) return { kind: 'unknown-sku' };
    return { kind: 'insufficient', available: row.current_available };
  }

  private async existingOutcome(orderId: string, sku: string): Promise<ReserveOutcome> {
    const reservation = await this.prisma.reservation.findUnique({ where: { orderId_sku: { orderId, sku } } });
    const stock = await this.prisma.stock.findUnique({ where: { sku } });
    if (!reservation) throw new Error(`reservation for ${orderId}/${sku} vanished after a unique violation`);
    return { kind: 'existing', reservationId: reservation.id, quantity: reservation.quantity, remaining: stock?.available ?? 0 };
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
