// Prisma queries of the idempotency_keys table. The rules (claiming, replaying, taking over an
// abandoned key) live in store.ts, the wrapping of a use case in idempotent.ts.
import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** A client's key as stored: the first request's fingerprint and, once it finished, its response. */
export interface IdempotencyKeyRow {
  userId: string;
  key: string;
  requestHash: string;
  /** Null while the first request is still running. */
  responseStatus: number | null;
  responseBody: unknown;
  createdAt: Date;
  expiresAt: Date;
}

/** On the database, or inside a unit of work (`OrderWrites.idempotencyKeys`) to answer a key with the change it made. */
export class IdempotencyKeyRepository {
  constructor(private readonly prisma: PrismaClient | Prisma.TransactionClient) {}

  /** Claims `key` until `expiresAt`; answers the claim's `createdAt`. Throws a unique violation when the user already holds `key`. */
  async create(userId: string, key: string, requestHash: string, expiresAt: Date): Promise<Date> {
    const created = await this.prisma.idempotencyKey.create({ data: { userId, key, requestHash, expiresAt }, select: { createdAt: true } });
    return created.createdAt;
  }

  find(userId: string, key: string): Promise<IdempotencyKeyRow | null> {
    return this.prisma.idempotencyKey.findUnique({ where: { userId_key: { userId, key } } });
  }

  /**
   * The key's answer, stored by the unit of work that made the change it describes, so both exist
   * or neither does; kept `expiresAt` on. Only on the claim made at `claimedAt` and not answered yet:
   * false when a retry took the key over meanwhile (the caller must then not commit its change).
   */
  async answer(userId: string, key: string, claimedAt: Date, status: number, body: unknown, expiresAt: Date): Promise<boolean> {
    const { count } = await this.prisma.idempotencyKey.updateMany({
      where: { userId, key, createdAt: claimedAt, responseStatus: null },
      data: { responseStatus: status, responseBody: body as Prisma.InputJsonValue, expiresAt },
    });
    return count === 1;
  }

  /** Removes the key only if it is still the one created at `createdAt` (not one claimed since). */
  async deleteCreatedAt(userId: string, key: string, createdAt: Date): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({ where: { userId, key, createdAt } });
  }

  /** Removes the claim made at `claimedAt` while it has no response stored yet (a retry's claim since stays). */
  async deleteUnanswered(userId: string, key: string, claimedAt: Date): Promise<void> {
    await this.prisma.idempotencyKey.deleteMany({ where: { userId, key, createdAt: claimedAt, responseStatus: null } });
  }

  /** Deletes up to `batch` keys expired before `now` (oldest first); answers how many. */
  async deleteExpired(batch: number, now: Date): Promise<number> {
    const expired = await this.prisma.idempotencyKey.findMany({ where: { expiresAt: { lt: now } }, orderBy: { expiresAt: 'asc' }, take: batch, select: { userId: true, key: true } });
    if (!expired.length) return 0;
    const { count } = await this.prisma.idempotencyKey.deleteMany({ where: { OR: expired } });
    return count;
  }
}
