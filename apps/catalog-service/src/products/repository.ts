// Prisma queries of products.
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

  create(product: NewProduct): Promise<ProductRow> {
    return this.prisma.product.create({ data: product });
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

  /** Updates only at the expected version; null when the row moved on or is gone. */
  async updateVersioned(id: string, version: number, changes: ProductChanges): Promise<ProductRow | null> {
    const { count } = await this.prisma.product.updateMany({ where: { id, version }, data: { ...changes, version: { increment: 1 } } });
    return count === 1 ? this.findById(id) : null;
  }

  async delete(id: string): Promise<boolean> {
    const { count } = await this.prisma.product.deleteMany({ where: { id } });
    return count === 1;
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
