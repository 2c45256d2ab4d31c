// Prisma queries of the users table. Callers get rows; rules live in service.ts.
// Emails are unique and looked up by their key (emailKeyOf): the rule the gateway's sign-in limit counts by too.
import { emailKeyOf } from '@platform/auth';
import { type DomainEvent, recordEvent, unitOfWork } from '@platform/events';
import { countMatching, escapeLike } from '@platform/db';
import { Unauthenticated } from '@platform/errors';
import { findKeysetPage, type PageRequest, type RowsPage, type TotalCount } from '@platform/paging';
import type { Prisma, PrismaClient } from '../generated/prisma/client';

/** A user as stored: plain values, no Prisma type (the address is three nullable columns). */
export interface UserRow {
  id: string;
  name: string;
  /** As the user typed it; shown back unchanged. */
  email: string;
  /** The lower-cased email: the unique key, and what `sort=email` orders by. */
  emailKey: string;
  phone: string | null;
  addressZipCode: string | null;
  addressLine1: string | null;
  addressLine2: string | null;
  nickname: string | null;
  marketingAgreed: boolean;
  role: 'customer' | 'admin';
  passwordHash: string;
  version: number;
  credentialVersion: number;
  createdAt: Date;
  updatedAt: Date;
  lastLoginAt: Date | null;
}

export interface UserAddress {
  zipCode: string;
  line1: string;
  line2?: string | null;
}

/** A whole profile (sign-up, PUT): what is null is cleared. */
export interface UserProfile {
  name: string;
  email: string;
  phone: string | null;
  address: UserAddress | null;
  nickname: string | null;
  marketingAgreed: boolean;
}

export interface NewUser extends UserProfile {
  id: string;
  role: 'customer' | 'admin';
  passwordHash: string;
  /** The use case's one clock reading: the user's createdAt and updatedAt, and its user.created's time. */
  createdAt: Date;
}

/** What a versioned update may change; fields left out keep their value. */
export interface UserChanges extends Partial<UserProfile> {
  passwordHash?: string;
  /** Counts the credential version up in the same write: every token issued before is refused from then on. */
  revokeTokens?: boolean;
}

export interface UserFilters {
  email?: string;
  namePrefix?: string;
  marketingAgreed?: boolean;
  createdFrom?: Date;
  createdBefore?: Date;
}

/** Public sort names to columns: email sorts by its indexed lower-case key. */
const sortColumns: Record<string, string> = { createdAt: 'createdAt', name: 'name', email: 'emailKey' };

/**
 * The least string above every string that starts with `prefix`, in code point order (the C and
 * C.UTF-8 collations the databases use, and PGlite's): its last character counted up, skipping
 * the surrogates. Undefined when there is none (the prefix ends in the last code point).
 */
function prefixUpperBound(prefix: string): string | undefined {
  const characters = [...prefix];
  const last = characters.pop()?.codePointAt(0);
  if (last === undefined || last >= 0x10ffff) return undefined;
  const next = last + 1 >= 0xd800 && last + 1 <= 0xdfff ? 0xe000 : last + 1;
  return characters.join('') + String.fromCodePoint(next);
}

/**
 * The list's filters, for Prisma and in SQL (the count). The `name` prefix is also a range on
 * `name`, which the (name, id) index serves: LIKE alone cannot use it under a C.UTF-8 collation,
 * and a count of "Kim…" read every user.
 */
function conditionsOf(filters: UserFilters): { where: Prisma.UserWhereInput; sql: { where: string; params: unknown[] } } {
  const sql: string[] = [];
  const params: unknown[] = [];
  const condition = (text: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    sql.push(text(`$${params.length}`));
  };
  const emailKey = filters.email !== undefined ? emailKeyOf(filters.email) : undefined;
  const prefix = filters.namePrefix || undefined;
  const upper = prefix !== undefined ? prefixUpperBound(prefix) : undefined;
  if (emailKey !== undefined) condition((p) => `email_key = ${p}`, emailKey);
  if (prefix !== undefined) {
    condition((p) => `name >= ${p}`, prefix);
    if (upper !== undefined) condition((p) => `name < ${p}`, upper);
    condition((p) => `name LIKE ${p} || '%'`, escapeLike(prefix));
  }
  if (filters.marketingAgreed !== undefined) condition((p) => `marketing_agreed = ${p}`, filters.marketingAgreed);
  if (filters.createdFrom) condition((p) => `created_at >= ${p}::timestamptz`, filters.createdFrom.toISOString());
  if (filters.createdBefore) condition((p) => `created_at < ${p}::timestamptz`, filters.createdBefore.toISOString());
  const where: Prisma.UserWhereInput = {
    emailKey,
    name: prefix !== undefined ? { startsWith: escapeLike(prefix), gte: prefix, lt: upper } : undefined,
    marketingAgreed: filters.marketingAgreed,
    createdAt: filters.createdFrom || filters.createdBefore ? { gte: filters.createdFrom, lt: filters.createdBefore } : undefined,
  };
  return { where, sql: { where: sql.join(' AND '), params } };
}

function addressColumns(address: UserAddress | null) {
  return { addressZipCode: address?.zipCode ?? null, addressLine1: address?.line1 ?? null, addressLine2: address?.line2 ?? null };
}

function changedColumns(changes: UserChanges): Prisma.UserUpdateManyMutationInput {
  const { email, address, revokeTokens, ...columns } = changes;
  return {
    ...columns,
    ...(email !== undefined ? { email, emailKey: emailKeyOf(email) } : {}),
    ...(address !== undefined ? addressColumns(address) : {}),
    ...(revokeTokens ? { credentialVersion: { increment: 1 } } : {}),
  };
}

/**
 * Whether `changes` would leave `row` as it is: every column they set already holds that value.
 * A password change never does (its hash is new, its token revocation counts up).
 */
export function changesNothing(row: UserRow, changes: UserChanges): boolean {
  return Object.entries(changedColumns(changes)).every(([column, value]) => row[column as keyof UserRow] === value);
}

/**
 * Runs `work` as one transaction with the user's row locked. What a user may hold only so many of
 * (API keys, webhook endpoints) is counted and added in it, so requests of one user arriving
 * together cannot each pass a count the others have not added to yet. A user deleted meanwhile
 * (its token still valid for the moment the gateway takes to learn of it) holds nothing any more:
 * 401, where the insert's foreign key failed as a 500.
 */
export function inOwnerTransaction<T>(prisma: PrismaClient, userId: string, work: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return prisma.$transaction(async (tx) => {
    const owners = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM users WHERE id = ${userId}::uuid FOR UPDATE`;
    if (owners.length === 0) throw new Unauthenticated('The account this request acts for no longer exists.');
    return work(tx);
  });
}

export class UserRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Runs `work` as one transaction: everything it writes through `UserWrites` (the change and
   * the event recording it) commits together, or nothing does when it throws.
   */
  unitOfWork<T>(work: (writes: UserWrites) => Promise<T>): Promise<T> {
    return unitOfWork(this.prisma, (tx) => work(new UserWrites(tx)));
  }

  findById(id: string): Promise<UserRow | null> {
    return this.prisma.user.findUnique({ where: { id } });
  }

  findByIds(ids: readonly string[]): Promise<UserRow[]> {
    return this.prisma.user.findMany({ where: { id: { in: [...ids] } } });
  }

  findByEmail(email: string): Promise<UserRow | null> {
    return this.prisma.user.findUnique({ where: { emailKey: emailKeyOf(email) } });
  }


  touchLastLogin(id: string, at: Date): Promise<UserRow> {
    return this.prisma.user.update({ where: { id }, data: { lastLoginAt: at } });
  }


  list(filters: UserFilters, page: PageRequest): Promise<RowsPage<UserRow, TotalCount>> {
    const { where, sql } = conditionsOf(filters);
    return findKeysetPage(page, {
      column: sortColumns[page.sort.field],
      find: (keyset) => this.prisma.user.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip }),
      count: () => countMatching(this.prisma, { table: 'users', ...sql }),
    });
  }

  static sortValue(row: UserRow, sortField: string): string | Date {
    return sortField === 'email' ? row.emailKey : sortField === 'name' ? row.name : row.createdAt;
  }
}

/** The writes of one unit of work (`UserRepository.unitOfWork`): they commit together or not at all. */
export class UserWrites {
  constructor(private readonly tx: Prisma.TransactionClient) {}

  create(user: NewUser): Promise<UserRow> {
    const { address, ...columns } = user;
    return this.tx.user.create({ data: { ...columns, updatedAt: user.createdAt, emailKey: emailKeyOf(user.email), ...addressColumns(address) } });
  }

  /**
   * Updates only when the version still matches (optimistic concurrency); null when it moved on.
   * `at`: the use case's clock reading, the updatedAt written and its event's time.
   */
  async updateVersioned(id: string, version: number, changes: UserChanges, at: Date): Promise<UserRow | null> {
    const { count } = await this.tx.user.updateMany({ where: { id, version }, data: { ...changedColumns(changes), version: { increment: 1 }, updatedAt: at } });
    return count === 1 ? this.tx.user.findUnique({ where: { id } }) : null;
  }

  /** Deletes the user, at `version` only when given; false when gone or at another version. */
  async delete(id: string, version?: number): Promise<boolean> {
    const { count } = await this.tx.user.deleteMany({ where: { id, ...(version === undefined ? {} : { version }) } });
    return count === 1;
  }

  /** The event that tells the other services about this change, committed with it. */
  recordEvent(event: DomainEvent): Promise<void> {
    return recordEvent(this.tx, event);
  }
}
