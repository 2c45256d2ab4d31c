// The gateway request pipeline, in the order a request meets it. The only public door.
import { readFileSync } from 'node:fs';
import express from 'express';
import { TokenVerifier } from '@platform/auth';
import { errorHandler, requireAcceptableResponse } from '@platform/errors';
import { createFederatedGraph } from '@platform/graphql-kit';
import { type Health, type Logger, type Metrics, requestContext, requestLog } from '@platform/service-kit';
import { callerMetrics } from './callers/caller-metrics';
import type { GatewayConfig } from './config';
import { dispatch, identifyCaller, limitBodySize, rateLimit, requireAuthentication, requireJsonBody, routeRequest } from './pipeline';
import { createUpstreamProxy } from './proxy/upstream-proxy';
import type { RateLimits } from './rate-limit/rate-limits';
import { routeTable } from './routing/route-table';
import { RouteTable } from './routing/router';

export interface GatewayAppDeps {
  config: Pick<GatewayConfig, 'jwtVerifySecrets' | 'NODE_ENV' | 'REQUEST_TIMEOUT_MS' | 'USERS_URL' | 'ORDERS_URL' | 'CATALOG_URL' | 'TRUST_PROXY' | 'ROUTE_DEPRECATIONS'>;
  rateLimits: RateLimits;
  logger: Logger;
  health: Health;
  metrics: Metrics;
  /** The composed supergraph and the OpenAPI document (beside main.js when built). */
  supergraphPath: string;
  openapiPath: string;
}

export async function createGatewayApp(deps: GatewayAppDeps) {
  const { config } = deps;
  const routes = new RouteTable(routeTable, config.ROUTE_DEPRECATIONS);
  const verifier = new TokenVerifier(config.jwtVerifySecrets);
  const proxyOptions = { timeoutMs: config.REQUEST_TIMEOUT_MS };
  const graph = await createFederatedGraph({
    supergraphSdl: readFileSync(deps.supergraphPath, 'utf8'),
    subgraphUrls: { users: `${config.USERS_URL}/graphql`, orders: `${config.ORDERS_URL}/graphql`, catalog: `${config.CATALOG_URL}/graphql` },
    introspection: config.NODE_ENV !== 'production',
    timeoutMs: config.REQUEST_TIMEOUT_MS,
  });
  const openapi = readFileSync(deps.openapiPath);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', config.TRUST_PROXY);
  app.use(requestContext(config.REQUEST_TIMEOUT_MS)); // trace id (traceparent in, X-Request-Id out), deadline
  app.use(requestLog(deps.logger)); // one JSON line per request
  app.use(deps.metrics.middleware); // latency by route
  app.use(callerMetrics(deps.metrics.registry)); // who calls which version and route
  app.use(deps.health.router()); // /healthz, /readyz (unversioned, public)
  app.use(limitBodySize); // 413 over 1 MiB, from Content-Length
  app.use(requireAcceptableResponse); // 406 unless JSON is acceptable
  app.use(requireJsonBody); // 415 for a body that is not JSON
  app.use(routeRequest(routes)); // /v1 → route table: 404 UNSUPPORTED_VERSION / 404 / 405 + Deprecation, Sunset
  app.use(identifyCaller(verifier)); // principal from the bearer token (cached until expiry)
  app.use(rateLimit(deps.rateLimits)); // RateLimit headers; 429 RATE_LIMITED
  app.use(requireAuthentication); // 401 unless the route is public
  app.use(
    dispatch({
      users: createUpstreamProxy(config.USERS_URL, proxyOptions),
      orders: createUpstreamProxy(config.ORDERS_URL, proxyOptions),
      catalog: createUpstreamProxy(config.CATALOG_URL, proxyOptions),
      graphql: [express.json({ limit: '1mb' }), graph.middleware],
      openapi: (_req, res) => void res.type('application/json').send(openapi),
    }),
  ); // proxy with timeout and remaining-deadline header; 502/503/504 in the error format
  app.use(errorHandler);
  return { app, stopGraph: graph.stop };
}
