// The gateway request pipeline, in the order a request meets it. The only public door.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import compression from 'compression';
import express, { type RequestHandler } from 'express';
import { Counter, type Registry } from 'prom-client';
import './request-state';
import { serviceTokenSource, TokenVerifier } from '@platform/auth';
import { errorHandler, MAX_BODY_BYTES, requireAcceptableResponse } from '@platform/errors';
import { createFederatedGraph, type OperationWork } from '@platform/graphql-gateway';
import { createOutgoingCalls, type OutgoingCalls } from '@platform/outgoing-calls';
import { type ConnectionLimits, type Health, inOrder, type Logger, type Metrics, requestContext, requestLog, requireJsonBody } from '@platform/service-kit';
import { DEVELOPMENT_ORIGINS, crossOrigin } from './browser/cross-origin';
import { browserPages } from './browser/pages';
import { callerMetrics } from './callers/caller-metrics';
import type { GatewayConfig } from './config';
import {
  dispatch,
  dropInternalHeaders,
  forgetCredentialsAfterUserWrite,
  keepAccountsFromApiKeys,
  identifyCaller,
  limitBodySize,
  parseReceivedJson,
  receiveBody,
  requireApiKeyScope,
  requireAuthentication,
  requireWellFormedRequest,
  revokeApiKeysAfterWrite,
  routeRequest,
  strictTransportSecurity,
} from './pipeline';
import { addressKeyOf, chargeEarlyRefusals, chargeGraphQLOperation, limitInFlight, limitsOf, rateLimit, rateLimitByAddress } from './rate-limit/policies';
import { createUpstreamProxy } from './proxy/upstream-proxy';
import { ApiKeyCheck, assertGraphQLScopes } from './auth/api-keys';
import { type CallerCredentials, CredentialCheck } from './auth/credentials';
import { subscribeToRevocations } from './auth/revocation-feed';
import { connectRedis, RateLimits, redisReady } from './rate-limit/rate-limits';
import { DeprecationOutcomes } from './deprecations/deprecation-outcomes';
import { graphqlDeprecations } from './deprecations/graphql-deprecations';
import { enforceDeprecations } from './deprecations/rest-deprecations';
import { gatewayEndpoints } from './routing/gateway-endpoints';
import { type RouteDefinition, routeTable } from './routing/route-table';
import { callerIdentityOf } from './callers/caller-identity';
import { graphqlUsageOf, operationUsageOf, recordRestUsage, type OpenApiDocument } from './usage/recording';
import { deprecationReports } from './usage/routes';
import { emptyUsageStore, openUsageStore, UsageRecorder } from '@platform/usage';
import { RouteTable } from './routing/router';

/** Below this, compressing costs more CPU than the bytes it saves are worth. */
const COMPRESS_FROM_BYTES = 1024;

/**
 * Compression, with a HEAD answered as the GET it stands for. The compression package leaves
 * HEAD alone, so a HEAD carried the uncompressed Content-Length while its GET went out compressed
 * without one, and RFC 9110 §8.6 forbids a HEAD Content-Length that GET would not send. The
 * package is shown the request as a GET; Node writes no body for a HEAD, whatever is written.
 */
function compressionAsForGet(threshold: number): RequestHandler {
  const compress = compression({ threshold });
  return (req, res, next) => compress(req.method === 'HEAD' ? (Object.create(req, { method: { value: 'GET' } }) as typeof req) : req, res, next);
}

export interface GatewayAppDeps {
  config: Pick<
    GatewayConfig,
    'jwtVerifySecrets' | 'NODE_ENV' | 'REQUEST_TIMEOUT_MS' | 'USERS_URL' | 'ORDERS_URL' | 'CATALOG_URL' | 'INVENTORY_URL' | 'TRUST_PROXY' | 'DEPRECATIONS_FILE' | 'UPSTREAM_LIMITS' | 'MAX_IN_FLIGHT_PER_CALLER' | 'CLIENT_BODY_TIMEOUT_MS' | 'CLIENT_BODY_MIN_RATE' | 'MAX_BUFFERED_BODY_BYTES' | 'CORS_ORIGINS' | 'GRAPHQL_TRUSTED_DOCUMENTS'
  >;
  /** Where each caller's use of the contracts is counted (libs/usage); unset: nothing is recorded and the reports answer from an empty store. */
  usage?: UsageRecorder;
  rateLimits: RateLimits;
  /** Refuses tokens their account outlived (users-service's credential versions). */
  credentials: CallerCredentials;
  /** Checks issued API keys with users-service (auth/api-keys.ts). */
  apiKeys: ApiKeyCheck;
  logger: Logger;
  health: Health;
  metrics: Metrics;
  /** Every call to a service (proxy, subgraphs, reports) is built by it; unset: one recording into `metrics` (tests). */
  calls?: OutgoingCalls;
  /** The composed supergraph and the OpenAPI document (beside main.js when built). */
  supergraphPath: string;
  openapiPath: string;
  /** The trusted documents manifest (hash → text), beside main.js when built. */
  trustedDocumentsPath: string;
  /** The routes served (unset: routing/route-table.ts); tests declare their own, a /v2 route among them. */
  routes?: RouteDefinition[];
  /** The /docs pages' scripts and styles, copied there by the build; unset: read from node_modules. */
  pagesDir?: string;
}

/** The pipeline, given its parts (built by `createGateway`). */
async function createGatewayApp(deps: GatewayAppDeps) {
  const { config, usage } = deps;
  const deprecations = config.DEPRECATIONS_FILE.entries;
  const routes = new RouteTable(deps.routes ?? routeTable, deprecations); // each route compiles its own registry entries once
  const deprecationOutcomes = new DeprecationOutcomes(deps.metrics.registry, deps.logger);
  const verifier = new TokenVerifier(config.jwtVerifySecrets);
  const calls = deps.calls ?? createOutgoingCalls({ registry: deps.metrics.registry, defaultTimeoutMs: config.REQUEST_TIMEOUT_MS });
  const chargeOperation = chargeGraphQLOperation(deps.rateLimits); // each mutation field one point, a query by its cost (rate-limit/policies.ts)
  const admitGraphQLOperation = async (req: express.Request, res: express.Response, work: OperationWork) => {
    if (res.locals.apiKey) assertGraphQLScopes(res.locals.apiKey, work); // 403 FORBIDDEN for a root field the key's scopes do not cover
    await chargeOperation(req, res, work);
  };
  const graph = await createFederatedGraph({
    supergraphSdl: readFileSync(deps.supergraphPath, 'utf8'),
    subgraphUrls: { users: `${config.USERS_URL}/graphql`, orders: `${config.ORDERS_URL}/graphql`, catalog: `${config.CATALOG_URL}/graphql`, inventory: `${config.INVENTORY_URL}/graphql` },
    introspection: config.NODE_ENV !== 'production',
    timeoutMs: config.REQUEST_TIMEOUT_MS,
    registry: deps.metrics.registry,
    calls,
    logger: deps.logger,
    trustedDocuments: { mode: config.GRAPHQL_TRUSTED_DOCUMENTS, documents: JSON.parse(readFileSync(deps.trustedDocumentsPath, 'utf8')) as Record<string, string> },
    admit: admitGraphQLOperation, // an API key's scopes, then points by the work asked
    inspectSelection: graphqlDeprecations(deprecations, deprecationOutcomes), // deprecated fields, arguments and enum values: headers; in a brownout or past the sunset a field is answered null with a GONE error at its path, an argument or enum value refuses the operation with GONE
    selected: usage ? (req, res, selection) => usage.record(callerIdentityOf(req, res), graphqlUsageOf(req, selection)) : undefined, // each field and argument the operation selects (a HEAD's: not the fields beneath its root fields), per caller
  });
  const openapi = readFileSync(deps.openapiPath);
  const operationUsage = operationUsageOf(JSON.parse(openapi.toString('utf8')) as OpenApiDocument);
  // The events' JSON Schemas, generated beside the OpenAPI document.
  const eventSchemas = readFileSync(path.join(path.dirname(deps.openapiPath), 'event-schemas.json'));
  const corsOrigins = config.CORS_ORIGINS ?? (config.NODE_ENV === 'production' ? [] : DEVELOPMENT_ORIGINS);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.TRUST_PROXY);
  // The steps that run on every path go in groups, each group one express layer (inOrder): express's router costs about 1.5 µs a layer.
  app.use(
    inOrder([
      dropInternalHeaders(app.get('trust proxy fn')), // a client's X-Request-Timeout-Ms, X-Forwarded-Prefix (and X-Forwarded-* unless a trusted proxy's) are dropped
      strictTransportSecurity, // HSTS when the request came over HTTPS (per a trusted proxy's X-Forwarded-Proto)
      requestContext(config.REQUEST_TIMEOUT_MS), // trace id (traceparent in, X-Request-Id out), deadline
      requestLog(deps.logger), // one JSON line per request
      deps.metrics.middleware, // latency by route
      callerMetrics(deps.metrics.registry), // who calls which version and route
      deps.health.router(), // /healthz, /readyz (unversioned, public)
      compressionAsForGet(COMPRESS_FROM_BYTES), // gzip or br for answers of 1 KiB and more, proxied ones too, as they stream; HEAD as its GET
      crossOrigin(corsOrigins), // CORS: preflights answered here, before routing and tokens; other origins get no CORS header
    ]),
  );
  app.use('/docs', rateLimitByAddress(deps.rateLimits)); // the reference pages and their assets count against the client address's budget
  app.use(browserPages({ assetsDir: deps.pagesDir, graphqlIde: config.NODE_ENV !== 'production' })); // GET /docs (API reference), GET /v1/graphql for a browser (GraphiQL, not in production)
  app.use(
    inOrder([
      requireWellFormedRequest, // 400 for a transfer coding other than chunked or a broken %-encoded path
      limitBodySize, // 413 over 1 MiB, from Content-Length
      requireAcceptableResponse, // 406 unless JSON is acceptable
      requireJsonBody({ refuseContentCoding: true }), // 415 for a body that is not JSON, or has a content coding
      routeRequest(routes), // /v1, /v2… → that version's routes: 404 UNSUPPORTED_VERSION / 404 / 405 + Cache-Control
      identifyCaller(verifier, deps.credentials, deps.apiKeys), // principal from the bearer token (cached until expiry) or the API key's owner; revoked tokens and keys refused
      limitInFlight(config.MAX_IN_FLIGHT_PER_CALLER), // 429 RATE_LIMITED past the requests one caller may have in flight
      rateLimit(deps.rateLimits), // RateLimit headers; 429 RATE_LIMITED
      requireAuthentication, // 401 unless the route is public
      requireApiKeyScope, // 403 when an API key's scopes do not cover the route
      receiveBody({ timeoutMs: config.CLIENT_BODY_TIMEOUT_MS, minBytesPerS: config.CLIENT_BODY_MIN_RATE, maxBufferedBytes: config.MAX_BUFFERED_BODY_BYTES }), // the whole body, at a minimum rate, before any connection to a service is taken: 408 too slow, 413 over 1 MiB
      keepAccountsFromApiKeys, // 403 for an API key deleting its owner or changing the password
      recordRestUsage(usage, operationUsage), // `fields` checked (400) and stripped; once answered, the operation, parameters, body fields and response fields used are counted for the caller
      enforceDeprecations(deprecationOutcomes), // a deprecated operation, query parameter or body field used: Deprecation, Sunset, Link; 410 GONE in a brownout or past the sunset; response fields named in Deprecated-Fields (left out in a brownout)
      forgetCredentialsAfterUserWrite(deps.credentials), // a password change or deletion that succeeds here: that user's credential answer is asked again
      revokeApiKeysAfterWrite(deps.apiKeys), // an API key revoked through this gateway: refused here from the next request
      dispatch({
        users: createUpstreamProxy(config.USERS_URL, { service: 'users', calls, ...config.UPSTREAM_LIMITS.users }),
        orders: createUpstreamProxy(config.ORDERS_URL, { service: 'orders', calls, ...config.UPSTREAM_LIMITS.orders }),
        catalog: createUpstreamProxy(config.CATALOG_URL, { service: 'catalog', calls, ...config.UPSTREAM_LIMITS.catalog }),
        inventory: createUpstreamProxy(config.INVENTORY_URL, { service: 'inventory', calls, ...config.UPSTREAM_LIMITS.inventory }),
        graphql: [parseReceivedJson({ limit: MAX_BODY_BYTES, type: 'application/json' }), graph.middleware],
        usage: deprecationReports(usage?.store ?? emptyUsageStore, () => deprecations, calls.http('users', config.USERS_URL)),
        openapi: (req, res) => void res.type('application/json').send(req.path.endsWith('/event-schemas') ? eventSchemas : openapi),
      }, gatewayEndpoints), // proxy over connections shared fairly between callers, with the remaining-deadline header; 502/503/504 in the error format
    ]),
  );
  app.use(chargeEarlyRefusals(deps.rateLimits)); // what was refused before rateLimit (400, 404, 405, 406, 413, 415) is counted by address and carries the RateLimit headers too
  app.use(errorHandler);
  return { app, stopGraph: graph.stop };
}

/** The generated files the gateway reads: beside main.js when built, in src/ for the tests. */
export type GatewayFiles = Pick<GatewayAppDeps, 'supergraphPath' | 'openapiPath' | 'trustedDocumentsPath' | 'pagesDir'>;

/** What a test may put in place of what the config would build. */
export interface GatewayOverrides {
  /** A credential check of the test's own: every token current, or users-service at another address (the revocation feed reaches it too). */
  credentials?: CallerCredentials & Pick<CredentialCheck, 'revoked' | 'forgetAll'>;
  /** A usage recorder of the test's own (USAGE_RECORDING opens the configured store otherwise). */
  usage?: UsageRecorder;
  /** Routes of the test's own, a /v2 route among them (routing/route-table.ts otherwise). */
  routes?: RouteDefinition[];
}

/**
 * The connections the public port holds (service-kit's `listen` keeps to them): MAX_CONNECTIONS
 * in all, MAX_CONNECTIONS_PER_ADDRESS from one client address (counted as the rate limits count
 * it: an IPv6 one by its /64) unless TRUST_PROXY trusts that peer as a proxy, which speaks for
 * many clients (the ingress; with a hop count or `true`, every peer).
 * Each refusal is counted, by the limit that refused it.
 */
function connectionLimits(config: Pick<GatewayConfig, 'MAX_CONNECTIONS' | 'MAX_CONNECTIONS_PER_ADDRESS'>, app: express.Express, registry: Registry): ConnectionLimits {
  const refused = new Counter({ name: 'gateway_connections_refused_total', help: 'Connections refused at the public port before any HTTP was read, by the limit that refused them: address (429) or total (503)', labelNames: ['limit'], registers: [registry] });
  for (const limit of ['address', 'total']) refused.inc({ limit }, 0); // both series from the start, so a rate over them is never empty
  const trustsAsProxy = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  return { max: config.MAX_CONNECTIONS, maxPerAddress: config.MAX_CONNECTIONS_PER_ADDRESS, clientOf: addressKeyOf, isProxy: (address) => trustsAsProxy(address, 0), onRefused: (limit) => refused.inc({ limit }) };
}

export interface Gateway {
  app: express.Express;
  /** What the public port's listen() holds it to. */
  connections: ConnectionLimits;
  /** Closed in this order when the gateway stops. */
  resources: (() => Promise<void>)[];
  /** Whether Redis answered at start (rate limits shared) and the revocation feed subscribed; undefined without REDIS_URL. */
  ready: { sharedCounts?: boolean; revocationFeed?: boolean };
  /** The rate limits' Redis connection (REDIS_URL). */
  redis?: ReturnType<typeof connectRedis>;
}

/**
 * The gateway's process, wired from its config: Redis, the credential and API-key checks with
 * users-service, the revocation feed, the rate limits, usage recording, then the pipeline above.
 * main.ts runs it, and every gateway test builds its gateway through it.
 */
export async function createGateway(config: GatewayConfig, kit: { logger: Logger; health: Health; metrics: Metrics }, files: GatewayFiles, overrides: GatewayOverrides = {}): Promise<Gateway> {
  const { logger, metrics } = kit;
  const redis = config.REDIS_URL ? connectRedis(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }, logger) : undefined;
  // Every call to a service (proxy, subgraphs, credential and API-key lookups, reports) is built by this one factory.
  const calls = createOutgoingCalls({ registry: metrics.registry, serviceToken: serviceTokenSource(config.jwtSecret, 'gateway'), defaultTimeoutMs: config.REQUEST_TIMEOUT_MS });
  const credentials = overrides.credentials ?? new CredentialCheck({ usersUrl: config.USERS_URL, calls, cacheMs: config.CREDENTIALS_CACHE_MS, timeoutMs: config.CREDENTIALS_TIMEOUT_MS, logger });
  const apiKeys = new ApiKeyCheck({ usersUrl: config.USERS_URL, calls, jwtSecret: config.jwtSecret, cacheMs: config.API_KEYS_CACHE_MS, timeoutMs: config.CREDENTIALS_TIMEOUT_MS, logger });
  // Revocations pushed by users-service reach this replica within a second (auth/revocation-feed.ts).
  const revocations = config.REDIS_URL ? subscribeToRevocations(config.REDIS_URL, credentials, logger, apiKeys) : undefined;
  // Both connections are awaited together: a Redis that is down costs the start 3 s, not twice that.
  const [sharedCounts, revocationFeed] = await Promise.all([redis ? redisReady(redis, 3_000) : undefined, revocations?.ready(3_000)]);
  if (sharedCounts === false) logger.warn("Redis did not answer at start: rate limits are counted in this replica's memory until it does");
  if (revocationFeed === false) logger.warn('revocation feed: not subscribed yet; revocations reach this gateway within CREDENTIALS_CACHE_MS until it is');
  if (!redis) logger.warn('REDIS_URL is not set: rate limits live in this process only; with several replicas each keeps its own count');
  logger.info({ file: config.DEPRECATIONS_FILE.file, entries: config.DEPRECATIONS_FILE.entries.length }, 'deprecation registry read');
  const rateLimits = new RateLimits(limitsOf(config), { redis, logger, registry: metrics.registry, probeIntervalMs: config.REDIS_PROBE_INTERVAL_MS });
  // Each caller's use of the contracts, shared by every replica: Redis when configured, else files under DATA_DIR.
  const usage =
    overrides.usage ??
    (config.USAGE_RECORDING === 'on'
      ? new UsageRecorder(openUsageStore({ redisUrl: config.REDIS_URL, dataDir: config.DATA_DIR, keyPrefix: config.USAGE_KEY_PREFIX }), { registry: metrics.registry, maxCallersPerDay: config.USAGE_MAX_CALLERS_PER_DAY, onError: (error) => logger.warn({ err: error }, 'usage flush failed; the counts are kept for the next one') }).start()
      : undefined);
  const { app, stopGraph } = await createGatewayApp({ config, rateLimits, credentials, apiKeys, logger, health: kit.health, metrics, calls, usage, routes: overrides.routes, ...files });
  return {
    app,
    connections: connectionLimits(config, app, metrics.registry),
    resources: [stopGraph, async () => usage?.stop().then(() => usage.store.close()), async () => rateLimits.stop(), async () => revocations?.stop(), async () => void (await redis?.quit().catch(() => redis.disconnect()))], // a Redis that is down refuses QUIT: stop reconnecting anyway
    ready: { sharedCounts, revocationFeed },
    redis,
  };
}
