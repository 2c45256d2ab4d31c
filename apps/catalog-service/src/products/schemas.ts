// Request shapes of products. Unknown fields and parameters are refused.
import { pagingQueryShape } from '@platform/paging';
import { commaSeparated, idField, int32, productSkuField, queryInt, resourceId, z } from '@platform/validation';

/** The product a path names: /products/{id} and what hangs under it (rating, reviews). */
export const productInPath = resourceId('Product');

const sku = productSkuField();
const name = z.string().trim().min(1).max(200);
/** Prices are integers in the smallest currency unit, far inside the column's 32-bit range. */
const MAX_PRICE = 1_000_000_000;
const price = int32({ min: 0, max: MAX_PRICE });
const currency = z.string().regex(/^[A-Z]{3}$/, { error: 'currency is an ISO 4217 code such as KRW' });
const imageUrl = z.url({ protocol: /^https?$/ }).max(500);

export const createProductBody = z.strictObject({
  sku,
  name,
  description: z.string().max(5000).nullable().optional(),
  imageUrl: imageUrl.nullable().optional(),
  price,
  currency: currency.optional(),
});

export const replaceProductBody = createProductBody;

export const patchProductBody = z.strictObject({
  sku: sku.optional(),
  name: name.optional(),
  description: z.string().max(5000).nullable().optional(),
  imageUrl: imageUrl.nullable().optional(),
  price: price.optional(),
  currency: currency.optional(),
});

export const productSortFields = ['name', 'price', 'rating', 'createdAt'] as const;

export const listProductsQuery = z.strictObject({
  ...pagingQueryShape,
  q: z.string().trim().min(1).max(100).optional(),
  minPrice: queryInt({ min: 0, max: MAX_PRICE }).optional(),
  maxPrice: queryInt({ min: 0, max: MAX_PRICE }).optional(),
  /** Batch read by id (orders-service pricing): comma-separated, up to 100. */
  ids: commaSeparated(z.array(idField()).min(1).max(100)).optional(),
});

export type CreateProductInput = z.output<typeof createProductBody>;
export type PatchProductInput = z.output<typeof patchProductBody>;
export type ListProductsQuery = z.output<typeof listProductsQuery>;
