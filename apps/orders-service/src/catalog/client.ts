// Reads prices from catalog-service over HTTP with the caller's credential and the time the caller
// has left, in the caller's trace. Catalog failures become 503 / 504 / 502 in the error format.
import { ApiError } from '@platform/errors';
import { currentContext, outgoingBudgetMs, outgoingTraceparent, TIMEOUT_HEADER } from '@platform/service-kit';

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

export function createCatalogClient(baseUrl: string, options: { defaultTimeoutMs?: number } = {}): Catalog {
  return {
    async productsByIds(ids) {
      const context = currentContext();
      const budget = outgoingBudgetMs(options.defaultTimeoutMs ?? 5_000, 'the catalog');
      const headers: Record<string, string> = { accept: 'application/json', [TIMEOUT_HEADER]: String(budget) };
      if (context?.authorization) headers.authorization = context.authorization;
      const traceparent = outgoingTraceparent();
      if (traceparent) headers.traceparent = traceparent;
      const url = `${baseUrl}/products?ids=${ids.map(encodeURIComponent).join(',')}&size=100`;
      let response: Response;
      try {
        response = await fetch(url, { headers, signal: AbortSignal.timeout(budget) });
      } catch (error) {
        if ((error as Error).name === 'TimeoutError') throw new ApiError('GATEWAY_TIMEOUT', 'The catalog did not answer in time.', { cause: error });
        throw new ApiError('SERVICE_UNAVAILABLE', 'The catalog is unavailable; retry shortly.', { headers: { 'Retry-After': '1' }, cause: error });
      }
      if (response.status >= 500) throw new ApiError(response.status === 503 ? 'SERVICE_UNAVAILABLE' : 'BAD_GATEWAY', 'The catalog could not answer.', { headers: { 'Retry-After': '1' } });
      if (!response.ok) throw new ApiError('BAD_GATEWAY', `The catalog refused the price lookup (${response.status}).`);
      const body = (await response.json()) as { items: CatalogProduct[] };
      return new Map(body.items.map((product) => [product.id, product]));
    },
  };
}
