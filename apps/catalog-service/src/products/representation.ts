// The public shapes of a product and its rating.
import type { ProductRow } from './repository';

export interface ProductResponse {
  id: string;
  sku: string;
  name: string;
  description: string | null;
  imageUrl: string | null;
  price: number;
  currency: string;
  rating: number;
  reviewCount: number;
  createdAt: string;
}

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
    rating: row.rating.toNumber(),
    reviewCount: reviewCountOf(row),
    createdAt: row.createdAt.toISOString(),
  };
}

export function toRatingResponse(row: ProductRow) {
  return {
    productId: row.id,
    average: row.rating.toNumber(),
    count: reviewCountOf(row),
    distribution: { '1': row.stars1, '2': row.stars2, '3': row.stars3, '4': row.stars4, '5': row.stars5 },
  };
}

export function etagOf(row: ProductRow): string {
  return `"${row.version}"`;
}
