// The public API, as data: every path the gateway serves, its methods, the service behind it,
// whether it needs a token, and its rate-limit policy. A new endpoint is one line here.
// Paths are as clients send them after the version prefix (`/v1`). A route declared for a new major
// version (`version: 'v2'`) is served at `/v2/...` and replaces the earlier version's route of the
// same path and method there; every other route of the earlier version is served under `/v2` too,
// unchanged (API spec, Versioning rule 5). docs/evolving-the-api.md: "Shipping /v2 of one resource".

import type { ScopedResource } from '@platform/auth';
import type { PolicyName } from '../rate-limit/policies';

/** `usage`: the gateway's own deprecation reports, from the usage store (usage/routes.ts). */
export type Upstream = 'users' | 'orders' | 'catalog' | 'inventory' | 'graphql' | 'openapi' | 'usage';

/** A major version of the whole API: the path prefix that names it. */
export type ApiVersion = `v${number}`;

export interface RouteDefinition {
  pattern: string;
  /**
   * The major version that introduced this route's behaviour (unset: v1). A `v1` route is forwarded
   * to its service at the path without the prefix (`/products/1`); a route of a later version at
   * its path with the prefix (`/v2/products/1`): the service mounts its new handler there, next to
   * the old one it keeps serving.
   */
  version?: ApiVersion;
  methods: string[];
  upstream: Upstream;
  /** Public routes answer without a token; everything else needs one. */
  auth?: 'public' | 'required';
  /** Its row of the rate-limit policy table (rate-limit/policies.ts); unset: `default`. */
  policy?: PolicyName;
  /**
   * What an API key needs a scope of to call it (`<resource>:read` for GET and HEAD, `:write` for
   * the rest). `api-keys`, or none on a route that needs a credential: keys are refused (403).
   */
  resource?: ScopedResource | 'api-keys';
  /** A POST that only reads (a search with its conditions in the body): a key needs `:read` for it. */
  readsOnly?: boolean;
  /** Shared caches may keep its answers (documents with nothing personal); every other route's answers are `no-store`. */
  cacheable?: boolean;
}

export const routeTable: RouteDefinition[] = [
  { pattern: '/users', methods: ['POST'], upstream: 'users', auth: 'public' },
  { pattern: '/users', methods: ['GET'], upstream: 'users', resource: 'users' },
  { pattern: '/users/:id', methods: ['GET', 'PATCH', 'PUT', 'DELETE'], upstream: 'users', resource: 'users' },
  { pattern: '/tokens', methods: ['POST'], upstream: 'users', auth: 'public', policy: 'sign-in' },
  { pattern: '/api-keys', methods: ['GET', 'POST'], upstream: 'users', resource: 'api-keys' },
  { pattern: '/api-keys/:id', methods: ['GET', 'DELETE'], upstream: 'users', resource: 'api-keys' },
  { pattern: '/api-keys/:id/rotation', methods: ['POST'], upstream: 'users', resource: 'api-keys' },
  { pattern: '/webhook-endpoints', methods: ['GET', 'POST'], upstream: 'users' },
  { pattern: '/webhook-endpoints/:id', methods: ['GET', 'PATCH', 'DELETE'], upstream: 'users' },
  { pattern: '/webhook-endpoints/:id/secret/rotation', methods: ['POST'], upstream: 'users' },
  { pattern: '/webhook-endpoints/:id/deliveries', methods: ['GET'], upstream: 'users' },
  { pattern: '/webhook-endpoints/:id/deliveries/:deliveryId/retry', methods: ['POST'], upstream: 'users' },
  { pattern: '/events', methods: ['GET'], upstream: 'users' },
  { pattern: '/orders', methods: ['GET', 'POST'], upstream: 'orders', resource: 'orders' },
  { pattern: '/orders/search', methods: ['POST'], upstream: 'orders', resource: 'orders', readsOnly: true },
  { pattern: '/orders/:id', methods: ['GET', 'PATCH', 'PUT', 'DELETE'], upstream: 'orders', resource: 'orders' },
  { pattern: '/orders/:id/items', methods: ['GET'], upstream: 'orders', resource: 'orders' },
  { pattern: '/orders/:id/shipment', methods: ['GET', 'PUT'], upstream: 'orders', resource: 'orders' },
  { pattern: '/orders/:id/cancellation', methods: ['GET', 'POST'], upstream: 'orders', resource: 'orders' },
  { pattern: '/order-items/:id', methods: ['GET'], upstream: 'orders', resource: 'orders' },
  { pattern: '/products', methods: ['GET', 'POST'], upstream: 'catalog', resource: 'products' },
  { pattern: '/products/:id', methods: ['GET', 'PATCH', 'PUT', 'DELETE'], upstream: 'catalog', resource: 'products' },
  { pattern: '/products/:id/rating', methods: ['GET'], upstream: 'catalog', resource: 'products' },
  { pattern: '/products/:id/reviews', methods: ['GET', 'POST'], upstream: 'catalog', resource: 'products' },
  { pattern: '/products/:id/reviews/:reviewId', methods: ['GET'], upstream: 'catalog', resource: 'products' },
  { pattern: '/stock-levels', methods: ['GET'], upstream: 'inventory', resource: 'inventory' },
  { pattern: '/stock-levels/:sku', methods: ['GET', 'PUT'], upstream: 'inventory', resource: 'inventory' },
  // GET for queries (a mutation over GET is 405), POST for both: the GraphQL-over-HTTP specification.
  { pattern: '/graphql', methods: ['GET', 'POST'], upstream: 'graphql', policy: 'graphql' },
  { pattern: '/deprecations', methods: ['GET'], upstream: 'usage' },
  { pattern: '/me/deprecations', methods: ['GET'], upstream: 'usage' },
  { pattern: '/openapi.json', methods: ['GET'], upstream: 'openapi', auth: 'public', cacheable: true },
  { pattern: '/event-schemas', methods: ['GET'], upstream: 'openapi', auth: 'public', cacheable: true },
];
