// Prisma queries of the api_keys table. Callers get rows; rules live in service.ts.
import { findKeysetPage, type PageRequest, type RowsPage } from '@platform/paging';
import type { Prisma, PrismaClient } from '../generated/prisma/client';
import { inOwnerTransaction } from '../users/repository';

/** An issued API key as stored (only a keyed hash of the key itself). */
export interface ApiKeyRow {
  id: string;
  userId: string;
  name: string;
  keyHash: string;
  hint: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  rotatedFromId: string | null;
}

export interface NewApiKey {
  id: string;
  userId: string;
  name: string;
  keyHash: string;
  hint: string;
  scopes: string[];
  expiresAt: Date | null;
  rotatedFromId?: string;
}

/** A key with what the gateway needs of its owner. */
export type ApiKeyWithOwner = ApiKeyRow & { user: { role: 'customer' | 'admin'; credentialVersion: number } };

/** Keys that still work at `now`: not revoked, not expired. */
const activeAt = (now: Date): Prisma.ApiKeyWhereInput => ({ revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] });

export class ApiKeyRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Runs `work` as one transaction with the owner's row locked, so two requests of one user cannot both pass the active-key limit. */
  ownerTransaction<T>(userId: string, work: (writes: ApiKeyWrites) => Promise<T>): Promise<T> {
    return inOwnerTransaction(this.prisma, userId, (tx) => work(new ApiKeyWrites(tx)));
  }

  findOwned(userId: string, id: string): Promise<ApiKeyRow | null> {
    return this.prisma.apiKey.findFirst({ where: { id, userId } });
  }

  findWithOwner(id: string): Promise<ApiKeyWithOwner | null> {
    return this.prisma.apiKey.findUnique({ where: { id }, include: { user: { select: { role: true, credentialVersion: true } } } });
  }

  list(userId: string, page: PageRequest): Promise<RowsPage<ApiKeyRow>> {
    return findKeysetPage(page, {
      column: 'createdAt',
      find: (keyset) => this.prisma.apiKey.findMany({ where: { AND: [{ userId }, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip }),
      count: () => this.prisma.apiKey.count({ where: { userId } }),
    });
  }

  /** Writes `at` unless the last write is less than a minute old: a busy key costs one write a minute, not one per call. */
  async touchLastUsed(id: string, at: Date): Promise<void> {
    await this.prisma.apiKey.updateMany({ where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(at.getTime() - 60_000) } }] }, data: { lastUsedAt: at } });
  }
}

/** The writes of one owner transaction (`ApiKeyRepository.ownerTransaction`). */
export class ApiKeyWrites {
  constructor(private readonly tx: Prisma.TransactionClient) {}

  countActive(userId: string, now: Date): Promise<number> {
    return this.tx.apiKey.count({ where: { userId, ...activeAt(now) } });
  }

  findOwned(userId: string, id: string): Promise<ApiKeyRow | null> {
    return this.tx.apiKey.findFirst({ where: { id, userId } });
  }

  /** The key that replaced `id` by rotation, if any (there is at most one: rotations of a key run under its owner's lock). */
  findSuccessor(userId: string, id: string): Promise<Pick<ApiKeyRow, 'id'> | null> {
    return this.tx.apiKey.findFirst({ where: { userId, rotatedFromId: id }, select: { id: true } });
  }

  create(key: NewApiKey): Promise<ApiKeyRow> {
    return this.tx.apiKey.create({ data: key });
  }

  revoke(id: string, at: Date): Promise<ApiKeyRow> {
    return this.tx.apiKey.update({ where: { id }, data: { revokedAt: at } });
  }

  expire(id: string, at: Date): Promise<ApiKeyRow> {
    return this.tx.apiKey.update({ where: { id }, data: { expiresAt: at } });
  }
}
