// What a public REST operation is, declared once beside its handler: method and path, who may
// call it, its rate-limit policy, what it takes (path parameters, query, body, headers) and what
// it answers. The service's Express routing and request checks (group.ts), the OpenAPI document
// (tools/openapi) and the gateway's route table (generated from these declarations into
// apps/gateway/src/routing/service-routes.generated.ts) are all derived from it.
import type { z } from 'zod';
import type { ScopedResource } from '@platform/auth';
import type { ErrorCode } from '@platform/errors';
import type { PathParameter } from '@platform/validation';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A major version of the whole API: the path prefix that names it. */
export type ApiVersion = `v${number}`;

/** Who answers a route: a service, or the gateway itself (`graphql`, `openapi`, `usage`). */
export type Upstream = 'users' | 'orders' | 'catalog' | 'inventory' | 'graphql' | 'openapi' | 'usage';

/**
 * Who may call it. `public`: no credential (sign-up, sign-in, the documents); `signed-in`: a
 * token or an API key, the service deciding what each caller sees; `admin`: an administrator's
 * credential (anyone else: 403).
 */
export type Access = 'public' | 'signed-in' | 'admin';

/** Headers a success response always carries besides those every response does. */
export type SuccessHeader = 'ETag' | 'Location';

export interface SuccessResponse {
  description: string;
  /** The representation answered (none: an empty body, as 204). Its component name is its `component()` name. */
  body?: z.ZodType;
  headers?: SuccessHeader[];
}

/** The `:name`s of an Express path, in their order: `/products/:id/reviews/:reviewId` → id, reviewId. */
export const pathParameterNames = (path: string): string[] => [...path.matchAll(/:([A-Za-z]\w*)/g)].map(([, name]) => name);

export interface EndpointDeclaration {
  method: HttpMethod;
  /** Express syntax, after the version prefix: `/products/:id`. */
  path: string;
  /**
   * The major version that introduced this behaviour (unset: v1). A later version's endpoint is
   * served by its service at the prefixed path (`/v2/products/:id`) beside the earlier one, and
   * replaces it under that version's prefix at the gateway (API spec, Versioning rule 5).
   */
  version?: ApiVersion;
  /** A sentence for the reference: what a reader of the document sees first. */
  summary: string;
  access: Access;
  /** What an API key needs a scope of (`<resource>:read` for GET, `:write` for the rest); `api-keys`: no key may call it. */
  scope?: ScopedResource | 'api-keys';
  /** A POST that only reads (a search with its conditions in the body): a key needs `:read`. */
  readsOnly?: boolean;
  /** Its row of the gateway's rate-limit policy table (apps/gateway/src/rate-limit/policies.ts); unset: `default`. */
  policy?: string;
  /** Shared caches may keep its answers (documents with nothing personal); everything else is `no-store`. */
  cacheable?: boolean;
  /**
   * The path's parameters, each `:name` of `path` in its order, and none else (defineEndpoints
   * refuses a declaration that names others): what each must be (`resourceId('Order')`,
   * `resourceKey(rule, what)`), so that one that names nothing is 404 before the handler runs,
   * or a key the request writes (`writtenKey(rule)`). The document publishes each rule.
   */
  params?: Readonly<Record<string, PathParameter>>;
  /** The query string's schema (`z.strictObject`: unknown parameters are refused); unset: it takes none (any parameter is 400 UNKNOWN_PARAMETER). */
  query?: z.ZodObject;
  /** The fields `sort` accepts. */
  sortFields?: readonly string[];
  /** The JSON body's schema (`z.strictObject`: unknown fields are refused). */
  body?: z.ZodType;
  /** Whether the body may be left out; unset, it may when the schema takes `{}` (a missing body reads as `{}`). */
  bodyRequired?: boolean;
  /** Takes If-Match: the handler gets the version it names (412 when malformed or stale). */
  ifMatch?: boolean;
  /** Takes Idempotency-Key: a retry with the same key applies once. */
  idempotencyKey?: boolean;
  /** The success answers by status: usually one; a PUT that may create has 200 and 201. */
  responses: Partial<Record<200 | 201 | 202 | 204, SuccessResponse>>;
  /** Answers 403 though public or signed-in (a filter naming someone else). `admin` implies it. */
  forbidden?: boolean;
  /** The 409 codes it can answer. */
  conflicts?: ErrorCode[];
  /** A GraphQL document it cannot run is a 400 in GraphQL's own format. */
  graphqlErrors?: boolean;
  /** GraphQL over GET: a mutation is 405. */
  queriesOnly?: boolean;
}

/** A declaration with the names its group gives it: its operation id (a verb phrase clients call it by) and its upstream. */
export interface Endpoint extends EndpointDeclaration {
  operationId: string;
  upstream: Upstream;
}

/** What the gateway needs of an endpoint to route it: one row per path, version and shared settings. */
export interface GatewayRoute {
  pattern: string;
  version?: ApiVersion;
  methods: HttpMethod[];
  upstream: Upstream;
  /** Public routes answer without a credential; everything else needs one. */
  auth?: 'public';
  policy?: string;
  resource?: ScopedResource | 'api-keys';
  readsOnly?: boolean;
  cacheable?: boolean;
}

/**
 * The gateway's rows for these endpoints: neighbours with the same path, version and settings
 * share a row (`/products/:id` GET, PATCH, PUT, DELETE), so the table reads as the API's paths.
 */
export function gatewayRoutesOf(endpoints: readonly Endpoint[]): GatewayRoute[] {
  const rows: GatewayRoute[] = [];
  for (const endpoint of endpoints) {
    const row: GatewayRoute = {
      pattern: endpoint.path,
      ...(endpoint.version ? { version: endpoint.version } : {}),
      methods: [endpoint.method],
      upstream: endpoint.upstream,
      ...(endpoint.access === 'public' ? { auth: 'public' as const } : {}),
      ...(endpoint.policy ? { policy: endpoint.policy } : {}),
      ...(endpoint.scope ? { resource: endpoint.scope } : {}),
      ...(endpoint.readsOnly ? { readsOnly: true } : {}),
      ...(endpoint.cacheable ? { cacheable: true } : {}),
    };
    const last = rows.at(-1);
    if (last && sameRoute(last, row)) last.methods.push(endpoint.method);
    else rows.push(row);
  }
  return rows;
}

function sameRoute(a: GatewayRoute, b: GatewayRoute): boolean {
  const settings = ({ methods: _methods, ...rest }: GatewayRoute) => JSON.stringify(rest);
  return settings(a) === settings(b);
}
