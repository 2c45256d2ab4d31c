// @platform/sdk: a typed client of the public API. The types are generated from the published
// OpenAPI document (openapi-types.ts, by tools/openapi/generate.mjs); the client is openapi-fetch,
// so every path, parameter, body and response is checked by the compiler. Beside it: every item
// of a paged list (allItems), errors by code (ApiRequestError, orThrow), and the events webhooks
// carry with their verification (verifyWebhook).
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './openapi-types';

export type { components, Middleware, operations, paths };
export { errorCodes, graphqlErrorCodes } from './error-codes';
export { ApiRequestError, isErrorCode, isGraphQLErrorCode, orThrow, type ErrorBody, type ErrorCode, type GraphQLErrorCode } from './errors';
export { allItems, type Page, type PageResult } from './paging';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent, type WebhookEventType } from './webhooks';
/** The document's named schemas: `Schemas['Order']`, `Schemas['Error']`... */
export type Schemas = components['schemas'];
export type ApiClient = Client<paths, 'application/json'>;

export interface ApiClientOptions {
  /** A bearer token from `POST /tokens`; sent as `Authorization: Bearer <token>`. */
  token?: string;
  /**
   * An issued API key (`opk_…`, from `POST /api-keys`), for machine callers; sent as
   * `X-Api-Key: <key>`. Give it or `token`, not both (the gateway refuses two credentials).
   */
  apiKey?: string;
  /** The application's name and version, sent as X-Client-Name and X-Client-Version: deprecation notices and usage reports name it. */
  client?: { name: string; version: string };
  /** Headers sent with every request (e.g. `traceparent`). */
  headers?: Record<string, string>;
  /** Sees every request and response (logging, metrics, contract checks). */
  middleware?: Middleware[];
  fetch?: typeof globalThis.fetch;
}

/**
 * A client for the API at `baseUrl` (the gateway's origin, e.g. `https://api.example.com`); paths
 * are under `/v1`, a later major's under its own prefix (`/v2/...`). Every call that answers a representation takes `fields`
 * (`params: { query: { fields: ['id', 'status'] } }`): the fields the application reads, so that
 * it is not counted as a user of the others when they are deprecated (docs/evolving-the-api.md).
 */
export function createApiClient(baseUrl: string, options: ApiClientOptions = {}): ApiClient {
  if (options.token && options.apiKey) throw new Error('createApiClient: give token or apiKey, not both');
  const client = createClient<paths>({
    baseUrl: `${baseUrl.replace(/\/+$/, '')}/v1`,
    headers: { ...(options.client ? { 'X-Client-Name': options.client.name, 'X-Client-Version': options.client.version } : {}), ...options.headers, ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}), ...(options.apiKey ? { 'X-Api-Key': options.apiKey } : {}) },
    // Lists in a query are comma-separated (`status=PENDING,CANCELED`), as the document says.
    querySerializer: { array: { style: 'form', explode: false } },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use(laterMajorPaths);
  for (const middleware of options.middleware ?? []) client.use(middleware);
  return client;
}

/**
 * The document lists v1's operations under its server `/v1` and a later major's at their full
 * path (`/v2/products/{id}`, docs/evolving-the-api.md "Shipping /v2 of one resource"): those are
 * sent to that path, not under `/v1`.
 */
const laterMajorPaths: Middleware = {
  onRequest({ request }) {
    const url = new URL(request.url);
    const path = url.pathname.replace(/\/v1(?=\/v\d+\/)/, '');
    if (path === url.pathname) return undefined;
    url.pathname = path;
    return new Request(url, request);
  },
};
