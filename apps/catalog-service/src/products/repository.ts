// Prisma queries of products.
import { type DomainEvent, recordEvent, unitOfWork } from '@platform/events';
import { countMatching, keywordLookup, nameFragmentsOf } from '@platform/db';
import { findKeysetPage, type PageRequest, type RowsPage, type TotalCount } from '@platform/paging';
import type { Prisma, PrismaClient, Product } from '../generated/prisma/client';

/** A product as stored, with plain values: `rating` is a number (the column is numeric(3,2)). */
export interface ProductRow {
  id: string;
  sku: string;
  name: string;
  description: string | null;
  imageUrl: string | null;
  /** In the smallest unit of `currency`. */
  price: number;
  currency: string;
  /** Reviews per number of stars. */
  stars1: number;
  stars2: number;
  stars3: number;
  stars4: number;
  stars5: number;
  /** The average of the stars, two decimals; 0 before the first review. */
  rating: number;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** The record of a product's row: its numeric rating read as a number, the search column left out. */
function toProductRow({ rating, nameFragments: _nameFragments, ...columns }: Product): ProductRow {
  return { ...columns, rating: rating.toNumber() };
}

const toProductRowOrNull = (row: Product | null) => (row ? toProductRow(row) : null);

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

/** The columns written with a product's name: its pieces for short keywords (`keywordLookup`). */
const withFragments = <T extends { name?: string }>(columns: T) => (columns.name === undefined ? columns : { ...columns, nameFragments: nameFragmentsOf([columns.name]) });

/** One SQL condition: its text around the placeholders of its values. */
interface SqlCondition {
  text: (...placeholders: string[]) => string;
  values: unknown[];
}

/** Conditions joined with AND, their placeholders numbered after `params` (which they extend). */
function sqlOf(conditions: readonly SqlCondition[], params: unknown[]): string {
  return conditions
    .map(({ text, values }) => text(...values.map((value) => `$${params.push(value)}`)))
    .join(' AND ');
}

/**
 * The list's filters, for Prisma and in SQL (the count and the `q` page). `q` is "name
 * contains", any case, its wildcards literal: through the trigram index, or the fragments when
 * it has no trigram (`keywordLookup`).
 */
function conditionsOf(filters: ProductFilters): { where: Prisma.ProductWhereInput; others: SqlCondition[]; keyword: SqlCondition[]; byFragments: boolean } {
  const { contains, fragments } = keywordLookup(filters.nameContains);
  const others: SqlCondition[] = [];
  const keyword: SqlCondition[] = [];
  if (filters.ids) others.push({ text: (p) => `id = ANY(${p}::uuid[])`, values: [filters.ids] });
  if (filters.minPrice !== undefined) others.push({ text: (p) => `price >= ${p}::int`, values: [filters.minPrice] });
  if (filters.maxPrice !== undefined) others.push({ text: (p) => `price <= ${p}::int`, values: [filters.maxPrice] });
  if (fragments) keyword.push({ text: (p) => `name_fragments @> ${p}::text[]`, values: [fragments] });
  if (contains !== undefined) keyword.push({ text: (p) => `name ILIKE '%' || ${p} || '%'`, values: [contains] });
  const where: Prisma.ProductWhereInput = {
    id: filters.ids ? { in: filters.ids } : undefined,
    nameFragments: fragments ? { hasEvery: fragments } : undefined,
    name: contains !== undefined ? { contains, mode: 'insensitive' } : undefined,
    price: filters.minPrice !== undefined || filters.maxPrice !== undefined ? { gte: filters.minPrice, lte: filters.maxPrice } : undefined,
  };
  return { where, others, keyword, byFragments: fragments !== undefined };
}

/** Public sort names to columns, and the type a cursor's value is read as. */
const sortColumns: Record<string, { column: string; type: string }> = {
  createdAt: { column: 'created_at', type: 'timestamptz' },
  name: { column: 'name', type: 'text' },
  price: { column: 'price', type: 'int' },
  rating: { column: 'rating', type: 'numeric' },
};

/** The newest (in sort order) products a `q` page checks first; a keyword this common fills the page there. */
const KEYWORD_WINDOW = 1_000;

export class ProductRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Runs `work` as one transaction: everything it writes through `ProductWrites` (the change and
   * the event recording it) commits together, or nothing does when it throws.
   */
  unitOfWork<T>(work: (writes: ProductWrites) => Promise<T>): Promise<T> {
    return unitOfWork(this.prisma, (tx) => work(new ProductWrites(tx)));
  }

  async findById(id: string): Promise<ProductRow | null> {
    return toProductRowOrNull(await this.prisma.product.findUnique({ where: { id } }));
  }

  async findByIds(ids: readonly string[]): Promise<ProductRow[]> {
    return (await this.prisma.product.findMany({ where: { id: { in: [...ids] } } })).map(toProductRow);
  }

  count(): Promise<number> {
    return this.prisma.product.count();
  }

  createMany(products: NewProduct[]): Promise<{ count: number }> {
    return this.prisma.product.createMany({ data: products.map(withFragments), skipDuplicates: true });
  }


  list(filters: ProductFilters, page: PageRequest): Promise<RowsPage<ProductRow, TotalCount>> {
    const { where, others, keyword, byFragments } = conditionsOf(filters);
    return findKeysetPage(page, {
      find: async (keyset) => {
        // The planner judges a trigram keyword's frequency well; a fragment's it does not.
        if (!byFragments) return (await this.prisma.product.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip })).map(toProductRow);
        const ids = await this.keywordPageIds(others, keyword, page);
        const byId = new Map((await this.findByIds(ids)).map((row) => [row.id, row]));
        return ids.flatMap((id) => byId.get(id) ?? []);
      },
      count: () => {
        const params: unknown[] = [];
        return countMatching(this.prisma, { table: 'products', where: sqlOf([...others, ...keyword], params), params });
      },
    });
  }

  /**
   * The ids of a page with a `q` looked up by its fragments, in two steps, without leaning on the
   * planner's guess of how common the keyword is (it takes a fragment it has no statistics for,
   * such as a two-letter keyword matching nothing, for one in 200 products, walked the sort order
   * and read all of them; trigram keywords it judges well, and Prisma's query serves them). First the newest KEYWORD_WINDOW products (or twenty
   * pages' worth) in sort order passing the other filters are checked: a common keyword fills the
   * page there. Otherwise the keyword is rarer than that, and its matches are collected through
   * its index (planned for all of them) and sorted.
   */
  private async keywordPageIds(others: SqlCondition[], keyword: SqlCondition[], page: PageRequest): Promise<string[]> {
    const { column, type } = sortColumns[page.sort.field] ?? sortColumns.createdAt;
    const direction = page.sort.direction === 'desc' ? 'DESC' : 'ASC';
    const bounded = [...others];
    if (page.after) {
      const { value, id } = page.after;
      bounded.push({ text: (p, q) => `(${column}, id) ${direction === 'DESC' ? '<' : '>'} (${p}::${type}, ${q}::uuid)`, values: [value instanceof Date ? value.toISOString() : value, id] });
    }
    const params: unknown[] = [];
    const filtered = sqlOf(bounded, params);
    const matching = sqlOf(keyword, params);
    const orderBy = `ORDER BY ${column} ${direction}, id ${direction}`;
    const wanted = page.take + 1;
    const ids = async (sql: string) => (await this.prisma.$queryRawUnsafe<{ id: string }[]>(sql, ...params)).map((row) => row.id);
    if (page.skip === 0) {
      const window = Math.max(KEYWORD_WINDOW, wanted * 20);
      const recent = await ids(`SELECT id FROM (SELECT ${[...new Set(['id', column, 'name', 'name_fragments'])].join(', ')} FROM products${filtered ? ` WHERE ${filtered}` : ''} ${orderBy} LIMIT ${window}) AS recent WHERE ${matching} ${orderBy} LIMIT ${wanted}`);
      if (recent.length === wanted) return recent;
    }
    return ids(`WITH matching AS MATERIALIZED (SELECT id, ${column} FROM products WHERE ${[filtered, matching].filter(Boolean).join(' AND ')}) SELECT id FROM matching ${orderBy} LIMIT ${wanted} OFFSET ${page.skip}`);
  }
}

/** The writes of one unit of work (`ProductRepository.unitOfWork`): they commit together or not at all. */
export class ProductWrites {
  constructor(private readonly tx: Prisma.TransactionClient) {}

  /** `at`: the use case's clock reading, the product's createdAt and updatedAt and its event's time. */
  async create(product: NewProduct, at: Date): Promise<ProductRow> {
    return toProductRow(await this.tx.product.create({ data: { ...withFragments(product), createdAt: at, updatedAt: at } }));
  }

  /** Updates only at the expected version; null when the row moved on or is gone. `at`: as create's. */
  async updateVersioned(id: string, version: number, changes: ProductChanges, at: Date): Promise<ProductRow | null> {
    const { count } = await this.tx.product.updateMany({ where: { id, version }, data: { ...withFragments(changes), version: { increment: 1 }, updatedAt: at } });
    return count === 1 ? toProductRowOrNull(await this.tx.product.findUnique({ where: { id } })) : null;
  }

  /** Deletes the product, at `version` only when given; false when it is gone or at another version. */
  async delete(id: string, version?: number): Promise<boolean> {
    const { count } = await this.tx.product.deleteMany({ where: { id, ...(version === undefined ? {} : { version }) } });
    return count === 1;
  }

  /** The event that tells the other services about this change, committed with it. */
  recordEvent(event: DomainEvent): Promise<void> {
    return recordEvent(this.tx, event);
  }
}
