// Prisma queries of products.
import { type DomainEvent, recordEvent } from '@platform/events';
import { findKeysetPage, type PageRequest } from '@platform/paging';
import { Prisma, type PrismaClient, type Product } from '../generated/prisma/client';

export type ProductRow = Product;

export interface ProductFilters {
  nameContains?: string;
  minPrice?: number;
  maxPrice?: number;
  ids?: string[];
}

export interface NewProduct {
  id: string;
  sku: string;
  name: string;
  description: string | null;
  imageUrl: string | null;
  price: number;
  currency: string;
}

/** What a versioned update may change; fields left out keep their value. */
export type ProductChanges = Partial<Omit<NewProduct, 'id'>>;

export class ProductRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Runs `work` as one transaction: everything it writes through `ProductWrites` (the change and
   * the event recording it) commits together, or nothing does when it throws.
   */
  unitOfWork<T>(work: (writes: ProductWrites) => Promise<T>): Promise<T> {
    return this.prisma.$transaction((tx) => work(new ProductWrites(tx)));
  }

  findById(id: string): Promise<ProductRow | null> {
    return this.prisma.product.findUnique({ where: { id } });
  }

  findByIds(ids: readonly string[]): Promise<ProductRow[]> {
    return this.prisma.product.findMany({ where: { id: { in: [...ids] } } });
  }

  count(): Promise<number> {
    return this.prisma.product.count();
  }

  createMany(products: NewProduct[]): Promise<{ count: number }> {
    return this.prisma.product.createMany({ data: products, skipDuplicates: true });
  }


  async list(filters: ProductFilters, page: PageRequest): Promise<{ rows: ProductRow[]; total?: number }> {
    const where: Prisma.ProductWhereInput = {
      id: filters.ids ? { in: filters.ids } : undefined,
      name: filters.nameContains ? { contains: filters.nameContains, mode: 'insensitive' } : undefined,
      price: filters.minPrice !== undefined || filters.maxPrice !== undefined ? { gte: filters.minPrice, lte: filters.maxPrice } : undefined,
    };
    return findKeysetPage(page, {
      find: (keyset) => this.prisma.product.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip }),
      count: () => this.prisma.product.count({ where }),
    });
  }
}

/** The writes of one unit of work (`ProductRepository.unitOfWork`): they commit together or not at all. */
export class ProductWrites {
  constructor(private readonly tx: Prisma.TransactionClient) {}

  create(product: NewProduct): Promise<ProductRow> {
    return this.tx.product.create({ data: product });
  }

  /** Updates only at the expected version; null when the row moved on or is gone. */
  async updateVersioned(id: string, version: number, changes: ProductChanges): Promise<ProductRow | null> {
    const { count } = await this.tx.product.updateMany({ where: { id, version }, data: { ...changes, version: { increment: 1 } } });
    return count === 1 ? this.tx.product.findUnique({ where: { id } }) : null;
  }

  async delete(id: string): Promise<boolean> {
    const { count } = await this.tx.product.deleteMany({ where: { id } });
    return count === 1;
  }

  /** The event that tells the other services about this change, committed with it. */
  recordEvent(event: DomainEvent): Promise<void> {
    return recordEvent(this.tx, event);
  }
}
