// Prisma queries of the users table. Callers get rows; rules live in service.ts.
import { type DomainEvent, recordEvent } from '@platform/events';
import { findKeysetPage, type PageRequest } from '@platform/paging';
import { Prisma, type PrismaClient, type User } from '../generated/prisma/client';

export type UserRow = User;

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

/** Emails are unique and looked up without regard to case or surrounding spaces. */
const emailKeyOf = (email: string) => email.trim().toLowerCase();

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

export class UserRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Runs `work` as one transaction: everything it writes through `UserWrites` (the change and
   * the event recording it) commits together, or nothing does when it throws.
   */
  unitOfWork<T>(work: (writes: UserWrites) => Promise<T>): Promise<T> {
    return this.prisma.$transaction((tx) => work(new UserWrites(tx)));
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


  async list(filters: UserFilters, page: PageRequest): Promise<{ rows: UserRow[]; total?: number }> {
    const where: Prisma.UserWhereInput = {
      emailKey: filters.email !== undefined ? emailKeyOf(filters.email) : undefined,
      name: filters.namePrefix ? { startsWith: filters.namePrefix } : undefined,
      marketingAgreed: filters.marketingAgreed,
      createdAt: filters.createdFrom || filters.createdBefore ? { gte: filters.createdFrom, lt: filters.createdBefore } : undefined,
    };
    return findKeysetPage(page, {
      column: sortColumns[page.sort.field],
      find: (keyset) => this.prisma.user.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip }),
      count: () => this.prisma.user.count({ where }),
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
    return this.tx.user.create({ data: { ...columns, emailKey: emailKeyOf(user.email), ...addressColumns(address) } });
  }

  /** Updates only when the version still matches (optimistic concurrency); null when it moved on. */
  async updateVersioned(id: string, version: number, changes: UserChanges): Promise<UserRow | null> {
    const { count } = await this.tx.user.updateMany({ where: { id, version }, data: { ...changedColumns(changes), version: { increment: 1 } } });
    return count === 1 ? this.tx.user.findUnique({ where: { id } }) : null;
  }

  async delete(id: string): Promise<boolean> {
    const { count } = await this.tx.user.deleteMany({ where: { id } });
    return count === 1;
  }

  /** The event that tells the other services about this change, committed with it. */
  recordEvent(event: DomainEvent): Promise<void> {
    return recordEvent(this.tx, event);
  }
}
