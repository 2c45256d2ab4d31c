// The public shapes of a product and its rating. The schemas are what the OpenAPI document
// publishes; the mappers are typed by them, so they agree.
import { component } from '@platform/endpoints';
import { listEnvelopeSchema } from '@platform/paging';
import { idField, z } from '@platform/validation';
import type { ProductRow } from './repository';

export const productRepresentation = component(
  'Product',
  z.object({
  id: idField(),
  sku: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  imageUrl: z.url().nullable(),
  price: z.number().int().min(0).meta({ description: 'In the smallest unit of `currency`.' }),
  currency: z.string().regex(/^[A-Z]{3}$/).meta({ description: 'ISO 4217 code.' }),
  rating: z.number().min(0).max(5).meta({ description: 'Average stars; 0 before the first review.' }),
  reviewCount: z.number().int().min(0),
  createdAt: z.iso.datetime(),
  }),
);

export const productPageRepresentation = component('ProductPage', listEnvelopeSchema(productRepresentation));

export type ProductResponse = z.infer<typeof productRepresentation>;

const starCount = z.number().int().min(0);

export const ratingRepresentation = component(
  'Rating',
  z.object({
  productId: idField(),
  average: z.number().min(0).max(5),
  count: z.number().int().min(0).meta({ description: 'How many reviews the product has (the same as reviewCount, its clearer name).' }),
  reviewCount: z.number().int().min(0).meta({ description: 'How many reviews the product has.' }),
  distribution: z.object({ '1': starCount, '2': starCount, '3': starCount, '4': starCount, '5': starCount }).meta({ description: 'Reviews per number of stars.' }),
  }),
);

export type RatingResponse = z.infer<typeof ratingRepresentation>;

export function reviewCountOf(row: ProductRow): number {
  return row.stars1 + row.stars2 + row.stars3 + row.stars4 + row.stars5;
}

export function toProductResponse(row: ProductRow): ProductResponse {
  return {
    id: row.id,
    sku: row.sku,
    name: row.name,
    description: row.description,
    imageUrl: row.imageUrl,
    price: row.price,
    currency: row.currency,
    rating: row.rating,
    reviewCount: reviewCountOf(row),
    createdAt: row.createdAt.toISOString(),
  };
}

export function toRatingResponse(row: ProductRow): RatingResponse {
  return {
    productId: row.id,
    average: row.rating,
    count: reviewCountOf(row),
    reviewCount: reviewCountOf(row),
    distribution: { '1': row.stars1, '2': row.stars2, '3': row.stars3, '4': row.stars4, '5': row.stars5 },
  };
}

export function etagOf(row: ProductRow): string {
  return `"${row.version}"`;
}
