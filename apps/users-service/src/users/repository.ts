// Prisma queries of the users table. Callers get rows; rules live in service.ts.
import { keysetQuery, type PageRequest } from '@platform/paging';
import { Prisma, type PrismaClient, type User } from '../generated/prisma/client';

export type UserRow = User;

export interface UserFilters {
  emailKey?: string;
  namePrefix?: string;
  marketingAgreed?: boolean;
  createdFrom?: Date;
  createdBefore?: Date;
}

/** Public sort names to columns: email sorts by its indexed lower-case key. */
const sortColumns: Record<string, string> = { createdAt: 'createdAt', name: 'name', email: 'emailKey' };

export class UserRepository {
  constructor(private readonly prisma: PrismaClient) {}

  create(data: Prisma.UserCreateInput): Promise<UserRow> {
    return this.prisma.user.create({ data });
  }

  findById(id: string): Promise<UserRow | null> {
    return this.prisma.user.findUnique({ where: { id } });
  }

  findByIds(ids: readonly string[]): Promise<UserRow[]> {
    return this.prisma.user.findMany({ where: { id: { in: [...ids] } } });
  }

  findByEmailKey(emailKey: string): Promise<UserRow | null> {
    return this.prisma.user.findUnique({ where: { emailKey } });
  }

  /** Updates only when the version still matches (optimistic concurrency); null when it moved on. */
  async updateVersioned(id: string, version: number, data: Prisma.UserUpdateInput): Promise<UserRow | null> {
    const { count } = await this.prisma.user.updateMany({ where: { id, version }, data: { ...data, version: { increment: 1 } } as Prisma.UserUpdateManyMutationInput });
    return count === 1 ? this.findById(id) : null;
  }

  touchLastLogin(id: string, at: Date): Promise<UserRow> {
    return this.prisma.user.update({ where: { id }, data: { lastLoginAt: at } });
  }

  async delete(id: string): Promise<boolean> {
    const { count } = await this.prisma.user.deleteMany({ where: { id } });
    return count === 1;
  }

  async list(filters: UserFilters, page: PageRequest): Promise<{ rows: UserRow[]; total?: number }> {
    const where: Prisma.UserWhereInput = {
      emailKey: filters.emailKey,
      name: filters.namePrefix ? { startsWith: filters.namePrefix } : undefined,
      marketingAgreed: filters.marketingAgreed,
      createdAt: filters.createdFrom || filters.createdBefore ? { gte: filters.createdFrom, lt: filters.createdBefore } : undefined,
    };
    const column = sortColumns[page.sort.field];
    const keyset = keysetQuery(page, column);
    const [rows, total] = await Promise.all([
      this.prisma.user.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: page.take + 1, skip: page.skip }),
      page.withTotal ? this.prisma.user.count({ where }) : Promise.resolve(undefined),
    ]);
    return { rows, total };
  }

  static sortValue(row: UserRow, sortField: string): string | Date {
    return sortField === 'email' ? row.emailKey : sortField === 'name' ? row.name : row.createdAt;
  }
}
