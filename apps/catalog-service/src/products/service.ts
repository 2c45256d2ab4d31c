// Rules of products: anyone signed in reads; only admins create, change or delete.
import { type Principal, requireAdmin } from '@platform/auth';
import { demoImageUrl, demoProducts } from '@platform/catalog-data';
import { Conflict, Invalid, NotFound } from '@platform/errors';
import { domainEvent } from '@platform/events';
import { isId, newId } from '@platform/ids';
import { type CursorValue, type ListEnvelope, parseSort, toListEnvelope, toPageRequest } from '@platform/paging';
import { unchangedAtVersion, updateAtVersion } from '@platform/service-kit';
import { whenUniqueViolated } from '@platform/db';
import { pathId } from '@platform/validation';
import { productEvent } from './events';
import type { NewProduct, ProductChanges, ProductRepository, ProductRow } from './repository';
import { createProductBody, type CreateProductInput, type ListProductsQuery, type PatchProductInput, productSortFields } from './schemas';

function skuTaken(): Conflict {
  return new Conflict('SKU_TAKEN', 'Another product already has this SKU.', [{ field: 'sku', code: 'NOT_ALLOWED', message: 'This SKU is taken.' }]);
}

function sortValueOf(row: ProductRow, field: (typeof productSortFields)[number]): CursorValue {
  // The cursor keeps the rating as the text the numeric column was written as ("4.5", "0").
  if (field === 'rating') return String(row.rating);
  return row[field];
}

/**
 * A whole product from a create or replace body: every field of the body the client did not send
 * is null, currency KRW. Read from the body's schema, so a field added there is cleared by PUT
 * without another edit here (docs/adding-a-field.md).
 */
function wholeProductOf(input: CreateProductInput): Omit<NewProduct, 'id'> {
  const unset = Object.fromEntries(Object.keys(createProductBody.shape).map((field) => [field, null])) as { [Field in keyof CreateProductInput]-?: null };
  return { ...unset, ...input, currency: input.currency ?? 'KRW' };
}

export class ProductService {
  constructor(
    private readonly products: ProductRepository,
    private readonly cursorSecret: string,
  ) {}

  /** GraphQL (`product(id:)`, `createReview(productId:)`) sends ids unchecked, so a malformed one is answered here too (404). */
  async get(id: string): Promise<ProductRow> {
    const product = await this.products.findById(pathId(id, 'Product'));
    if (!product) throw NotFound.of('Product');
    return product;
  }

  /** Products among `ids`, for batched GraphQL references. */
  async getMany(ids: readonly string[]): Promise<Map<string, ProductRow>> {
    const valid = ids.filter(isId);
    const rows = valid.length ? await this.products.findByIds(valid) : [];
    return new Map(rows.map((row) => [row.id, row]));
  }

  async list(query: ListProductsQuery): Promise<ListEnvelope<ProductRow>> {
    const { size, cursor, page, offset, limit, withTotal, sort: sortParam, ...filters } = query;
    if (filters.minPrice !== undefined && filters.maxPrice !== undefined && filters.minPrice > filters.maxPrice) {
      throw new Invalid('minPrice is above maxPrice.', [{ field: 'minPrice', code: 'OUT_OF_RANGE', message: 'minPrice must not exceed maxPrice.' }]);
    }
    const sort = parseSort(sortParam, productSortFields, { field: 'createdAt', direction: 'desc' });
    const pageRequest = toPageRequest({ size, cursor, page, offset, limit, withTotal }, { list: 'products', sort, filters, secret: this.cursorSecret });
    const ids = filters.ids?.filter(isId);
    const { rows, total } = await this.products.list({ nameContains: filters.q, minPrice: filters.minPrice, maxPrice: filters.maxPrice, ids }, pageRequest);
    return toListEnvelope(rows, pageRequest, { secret: this.cursorSecret, sortValue: (row) => sortValueOf(row, sort.field), totalCount: total });
  }

  async create(principal: Principal, input: CreateProductInput): Promise<ProductRow> {
    requireAdmin(principal);
    const product: NewProduct = { id: newId(), ...wholeProductOf(input) };
    return whenUniqueViolated(
      this.products.unitOfWork(async (writes) => {
        // One clock reading for the product's createdAt and its product.created's time.
        const at = new Date();
        const created = await writes.create(product, at);
        await writes.recordEvent(productEvent('product.created', created, at));
        return created;
      }),
      skuTaken,
    );
  }

  async patch(principal: Principal, id: string, input: PatchProductInput, expectedVersion?: number): Promise<ProductRow> {
    requireAdmin(principal);
    return this.update(id, input, expectedVersion);
  }

  /** PUT: the whole product; optional fields not sent are cleared (currency back to KRW). */
  async replace(principal: Principal, id: string, input: CreateProductInput, expectedVersion?: number): Promise<ProductRow> {
    requireAdmin(principal);
    return this.update(id, wholeProductOf(input), expectedVersion);
  }

  /** Deletes the product; with `expectedVersion` (If-Match) only at that version, as a change is made. */
  async delete(principal: Principal, id: string, expectedVersion?: number): Promise<void> {
    requireAdmin(principal);
    const product = await this.get(id);
    await updateAtVersion(
      'product',
      product.version,
      expectedVersion,
      (version) =>
        this.products.unitOfWork(async (writes) => {
          if (!(await writes.delete(product.id, expectedVersion === undefined ? undefined : version))) return null;
          // Read once the row went: a delete that waited for a concurrent update's lock happens after that update.
          await writes.recordEvent(domainEvent('product.deleted', product.id, { id: product.id, sku: product.sku }, new Date()));
          return true;
        }),
      { explainLostRace: async () => NotFound.of('Product') }, // unconditional: only a delete beside it leaves nothing to delete
    );
  }

  /** Seeds the demo catalog into an empty database; a database with products is left alone. */
  async seedDemoCatalog(): Promise<number> {
    if ((await this.products.count()) > 0) return 0;
    const { count } = await this.products.createMany(
      demoProducts.map((product) => ({ id: newId(), sku: product.sku, name: product.name, description: product.description, imageUrl: demoImageUrl(product.sku), price: product.price, currency: 'KRW' })),
    );
    return count;
  }

  private async update(id: string, changes: ProductChanges, expectedVersion?: number): Promise<ProductRow> {
    const current = await this.get(id);
    if (Object.entries(changes).every(([field, value]) => current[field as keyof ProductRow] === value)) return unchangedAtVersion(current, expectedVersion);
    return updateAtVersion('product', current.version, expectedVersion, (version) =>
      whenUniqueViolated(
        this.products.unitOfWork(async (writes) => {
          // One clock reading for the product's updatedAt and its product.updated's time.
          const at = new Date();
          const updated = await writes.updateVersioned(current.id, version, changes, at);
          if (updated) await writes.recordEvent(productEvent('product.updated', updated, at));
          return updated;
        }),
        skuTaken,
      ),
    );
  }
}
