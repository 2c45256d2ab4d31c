// Express glue: the one error handler, and the handlers for requests no route can take.
import { randomBytes } from 'node:crypto';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { ApiError } from './api-error';
import { asApiError, PROBLEM_JSON, toErrorBody, toProblemBody } from './render';

function traceIdOf(res: Response): string {
  return res.locals.traceId ?? randomBytes(16).toString('hex');
}

/** Sends `error` in the one error format, as RFC 9457 when the client prefers problem+json. */
export function sendError(req: Request, res: Response, thrown: unknown): void {
  const error = asApiError(thrown);
  // The request log reads the cause; the client never sees it.
  if (error.status >= 500) res.locals.errorCause = error.cause ?? error;
  const traceId = traceIdOf(res);
  // A refusal is about this request (its caller's budget, its headers, an outage now), never for a
  // cache to keep, also on a route whose answers shared caches may keep (the gateway's
  // /v1/openapi.json): a 429 stored there for 5 minutes reached every client.
  res.setHeader('Cache-Control', 'no-store');
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status);
  const wantsProblem = req.accepts(['application/json', PROBLEM_JSON]) === PROBLEM_JSON;
  if (wantsProblem) {
    // Behind the gateway, the path the client used starts with the prefix it stripped.
    const prefix = req.headers['x-forwarded-prefix'];
    const instance = `${typeof prefix === 'string' && /^\/[\w-]*$/.test(prefix) ? prefix : ''}${req.originalUrl}`;
    res.type(PROBLEM_JSON).send(JSON.stringify(toProblemBody(error, traceId, instance)));
  } else {
    res.json(toErrorBody(error, traceId));
  }
}

/** Last middleware of every app: renders whatever was thrown. Never sends stacks or SQL. */
export const errorHandler: ErrorRequestHandler = (error, req, res, next) => {
  if (res.headersSent) return next(error);
  sendError(req, res, error);
};

/** After all routes: nothing matched the path. */
export const notFoundHandler: RequestHandler = (req) => {
  throw new ApiError('NOT_FOUND', `No resource at ${req.method} ${req.path}.`);
};

/** The parts of Express's router (the `router` package) that tell which routes serve a path. */
interface RouterLayer {
  route?: { methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
  /** Mounted at `/`: sees every path. */
  slash?: boolean;
  match(path: string): unknown;
}

/**
 * The methods the routes of `stack` (and of routers mounted at `/` in it) answer at `path`, in
 * the order Express tries them. A route that takes every method (`.all(methodNotAllowed)`) ends
 * the search: the routes after it never see the path, so a literal path declared before a
 * parameter one (`/orders/search` before `/orders/:id`) names only its own methods. Returns
 * whether such a route was met.
 */
function methodsServedAt(stack: RouterLayer[], path: string, methods: Set<string>): boolean {
  for (const layer of stack) {
    if (layer.route) {
      if (!layer.match(path)) continue;
      for (const method of Object.keys(layer.route.methods)) if (method !== '_all') methods.add(method.toUpperCase());
      if (layer.route.methods._all) return true;
    } else if (layer.slash && layer.handle?.stack) {
      if (methodsServedAt(layer.handle.stack, path, methods)) return true;
    }
  }
  return false;
}

/**
 * Put last on a route (`router.route(p).get(...).all(methodNotAllowed)`): the route exists but
 * not for this method, so answer 405 with the methods the app does have at this path, wherever
 * they are declared (a public `POST /users` above the authentication middleware, `GET /users`
 * below it).
 */
export const methodNotAllowed: RequestHandler = (req) => {
  const served = new Set<string>();
  const appRouter = (req.app as unknown as { router?: { stack: RouterLayer[] } }).router;
  if (appRouter) methodsServedAt(appRouter.stack, req.path, served);
  // A router mounted under a prefix is not searched: its own route answers alone.
  if (served.size === 0) for (const method of Object.keys((req.route as { methods: Record<string, boolean> }).methods)) if (method !== '_all') served.add(method.toUpperCase());
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) => served.has(method));
  if (methods.includes('GET')) methods.push('HEAD');
  throw new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not supported here.`, { headers: { Allow: methods.join(', ') } });
};

/** 406 when the client accepts neither JSON nor problem+json (nor, for GraphQL, graphql-response+json). */
/** The GraphQL-over-HTTP specification's own media type (its answers follow HTTP status rules). */
const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json';

/** An `application/json` range with a weight of 0, wherever in the list: JSON not acceptable (RFC 9110 §12.4.2). */
const REFUSES_JSON = /(?:^|,)\s*application\/json\s*;[^,]*\bq\s*=\s*0(?:\.0{0,3})?\s*(?=[,;]|$)/i;
/** GraphQL's own type named in the list (not reached through a wildcard). */
const NAMES_GRAPHQL_RESPONSE = /(?:^|,)\s*application\/graphql-response\+json\s*(?=[,;]|$)/i;

export const requireAcceptableResponse: RequestHandler = (req, _res, next) => {
  const accept = req.headers.accept;
  const refusesJson = accept !== undefined && REFUSES_JSON.test(accept);
  // Fast path for what nearly every client sends (`application/json; charset=utf-8` too, which the
  // parser would not match); the full parser for the rest, and for JSON refused (`;q=0`).
  if (!accept || accept === '*/*' || (accept.startsWith('application/json') && !refusesJson)) return next();
  // JSON refused by name: a wildcard or problem+json beside it does not make the answer acceptable,
  // since a success is JSON (problem+json is for errors); only GraphQL's own type, named, is one.
  const acceptable = refusesJson ? NAMES_GRAPHQL_RESPONSE.test(accept) && req.accepts(GRAPHQL_RESPONSE_JSON) : req.accepts(['application/json', PROBLEM_JSON, GRAPHQL_RESPONSE_JSON]);
  if (!acceptable) {
    throw new ApiError('NOT_ACCEPTABLE', 'This API answers with application/json (or application/problem+json for errors).');
  }
  next();
};
