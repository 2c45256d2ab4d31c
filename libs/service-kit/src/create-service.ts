// One assembly for the HTTP side of every service behind the gateway (users, orders, catalog,
// inventory): the stages in the order a request meets them, written once. Each app's app.ts
// builds its resources and plugs them in here; main.ts and the tests both call that app.ts, so
// what the tests run is what production runs.
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { authenticate, type TokenVerifier } from '@platform/auth';
import { errorHandler, notFoundHandler, requireAcceptableResponse } from '@platform/errors';
import { readQueryString } from '@platform/validation';
import type { Health } from './health';
import { inOrder } from './in-order';
import { jsonBody } from './json-body';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { requestContext } from './request-context';
import { requestLog } from './request-log';

/** Handlers mounted at `/` (a router), or under a path. */
export type Mount = RequestHandler | { path: string; handlers: RequestHandler[] };

/** A group of endpoints' routes (libs/endpoints `EndpointRoutes`): those without a token and those with one. */
export interface ResourceRoutes {
  withoutToken: RequestHandler;
  withToken: RequestHandler;
}

export interface ServiceParts {
  logger: Logger;
  health: Health;
  metrics: Metrics;
  /** A request's time budget when the caller sends none (REQUEST_TIMEOUT_MS; the gateway sends its remaining one). */
  requestTimeoutMs: number;
  /** The service's subgraph, served at /graphql; it verifies the forwarded token itself. */
  graphql: RequestHandler;
  /** What other services call (service tokens only, each mount checks them): the event log, dead letters, /internal/…. */
  internal: Mount[];
  /** People's tokens, checked for every resource route below. */
  verifier: TokenVerifier;
  /**
   * The service's public API (libs/endpoints: each group's routes from its declarations): the
   * endpoints declared `public` are mounted above the token check, all the others below it.
   */
  resources: ResourceRoutes[];
  /** Error middleware before the error renderer: the failures that are not the request's (a database outage: 503). */
  outages: ErrorRequestHandler[];
}

/** The express app of a service: every stage in order, the service's own parts in their places. */
export function createService(parts: ServiceParts): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // ETags are the versions resources set, never express's body hashes
  // Express answers a GET 304 on its own when If-None-Match names the ETag the route set. Our
  // ETags are the versions writes check (If-Match), and some answers change without their version
  // moving (a product's rating with each review, a user's lastLoginAt with each sign-in): a 304
  // would keep a client on a stale copy. So If-None-Match is not evaluated; a GET answers in full.
  Object.defineProperty(app.request, 'fresh', { get: () => false });
  app.set('query parser', readQueryString); // a broken %-escape in the query is the client's 400, as in the path
  // Steps mounted on every path run as one express layer per group (inOrder), not one layer each.
  app.use(
    inOrder([
      requestContext(parts.requestTimeoutMs), // trace id, X-Request-Id, deadline
      requestLog(parts.logger), // one JSON line per request
      parts.metrics.middleware, // latency by route
      parts.health.router(), // /healthz, /readyz
    ]),
  );
  app.get('/metrics', parts.metrics.handler);
  app.use(
    inOrder([
      requireAcceptableResponse, // 406
      ...jsonBody(), // 415, 413, malformed JSON
    ]),
  );
  app.use('/graphql', parts.graphql); // the subgraph; verifies the forwarded token itself
  mount(app, parts.internal); // service tokens only
  for (const routes of parts.resources) app.use(routes.withoutToken); // the endpoints declared public (sign-up, sign-in)
  app.use(authenticate(parts.verifier)); // everything below needs a bearer token; a route added below is protected by default
  for (const routes of parts.resources) app.use(routes.withToken);
  app.use(notFoundHandler); // 404: no route here
  for (const outage of parts.outages) app.use(outage);
  app.use(errorHandler); // every failure in the one error format
  return app;
}

function mount(app: Express, mounts: readonly Mount[]): void {
  for (const entry of mounts) {
    if (typeof entry === 'function') app.use(entry);
    else app.use(entry.path, ...entry.handlers);
  }
}
