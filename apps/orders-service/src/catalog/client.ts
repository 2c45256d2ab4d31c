// Reads prices from catalog-service with the caller's credential, through the one outgoing-call
// factory (libs/outgoing-calls: deadline from the time the caller has left, the caller's trace,
// metrics, and 503 / 504 / 502 for a catalog that cannot be reached, is too slow or answers
// garbage). What is left here is what the catalog's answers mean.
import { ApiError } from '@platform/errors';
import { type HttpTarget, unavailable } from '@platform/outgoing-calls';

export interface CatalogProduct {
  id: string;
  sku: string;
  name: string;
  price: number;
  currency: string;
}

export interface Catalog {
  /** The products among `ids` that exist (at most 100 ids). */
  productsByIds(ids: string[]): Promise<Map<string, CatalogProduct>>;
}

/** `catalog`: the factory's HTTP target for catalog-service (`calls.http('catalog', CATALOG_URL)`). */
export function createCatalogClient(catalog: HttpTarget): Catalog {
  return {
    async productsByIds(ids) {
      const answer = await catalog.request({ operation: 'products-by-ids', path: `/products?ids=${ids.map(encodeURIComponent).join(',')}&size=100`, headers: { accept: 'application/json' }, credential: 'caller', json: true });
      if (answer.status === 503) throw unavailable(catalog.target);
      if (answer.status >= 300) throw new ApiError('BAD_GATEWAY', `The catalog refused the price lookup (${answer.status}).`);
      const body = answer.body as { items: CatalogProduct[] };
      return new Map(body.items.map((product) => [product.id, product]));
    },
  };
}
