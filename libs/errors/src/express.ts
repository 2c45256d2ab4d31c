// Express glue: the one error handler, and the handlers for requests no route can take.
import { randomBytes } from 'node:crypto';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { ApiError } from './api-error';
import { asApiError, PROBLEM_JSON, toErrorBody, toProblemBody } from './render';

export const MAX_BODY_BYTES = 1024 * 1024;

function traceIdOf(res: Response): string {
  return (res.locals.traceId as string | undefined) ?? randomBytes(16).toString('hex');
}

/** Sends `error` in the one error format, as RFC 9457 when the client prefers problem+json. */
export function sendError(req: Request, res: Response, thrown: unknown): void {
  const error = asApiError(thrown);
  // The request log reads the cause; the client never sees it.
  if (error.status >= 500) res.locals.errorCause = error.cause ?? error;
  const traceId = traceIdOf(res);
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

/**
 * Put last on a route (`router.route(p).get(...).all(methodNotAllowed)`): the route exists but
 * not for this method, so answer 405 with the methods it does have.
 */
export const methodNotAllowed: RequestHandler = (req) => {
  const methods = Object.keys((req.route as { methods: Record<string, boolean> }).methods)
    .filter((method) => method !== '_all')
    .map((method) => method.toUpperCase());
  if (methods.includes('GET') && !methods.includes('HEAD')) methods.push('HEAD');
  throw new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not supported here.`, { headers: { Allow: methods.join(', ') } });
};

/** 406 when the client accepts neither JSON nor problem+json (nor, for GraphQL, graphql-response+json). */
/** The GraphQL-over-HTTP specification's own media type (its answers follow HTTP status rules). */
const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json';

export const requireAcceptableResponse: RequestHandler = (req, _res, next) => {
  const accept = req.headers.accept;
  // Fast path for what nearly every client sends; the full parser only for the rest.
  if (!accept || accept === '*/*' || accept.startsWith('application/json')) return next();
  if (!req.accepts(['application/json', PROBLEM_JSON, GRAPHQL_RESPONSE_JSON])) {
    throw new ApiError('NOT_ACCEPTABLE', 'This API answers with application/json (or application/problem+json for errors).');
  }
  next();
};
