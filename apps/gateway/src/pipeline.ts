// The gateway's own pipeline steps, in the order app.ts runs them. Proxied requests are never
// body-parsed: limits are checked on headers, so bodies stream straight to the service.
import express, { type RequestHandler } from 'express';
import type { Principal, TokenVerifier } from '@platform/auth';
import { ApiError, MAX_BODY_BYTES } from '@platform/errors';
import type { RateLimits } from './rate-limit/rate-limits';
import type { CompiledRoute, RouteTable } from './routing/router';

export const CURRENT_VERSION = 'v1';

/** 413 before a byte is forwarded when Content-Length says the body is over 1 MiB. */
export const limitBodySize: RequestHandler = (req, _res, next) => {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
  next();
};

/** 415 for a body that is not JSON. */
export const requireJsonBody: RequestHandler = (req, _res, next) => {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody && !req.is(['application/json', 'application/*+json'])) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.');
  next();
};

/** `/v1/...` → the route of the table; `/v2/...` → 404 UNSUPPORTED_VERSION; `/graphql` is kept as an alias. */
export function routeRequest(routes: RouteTable): RequestHandler {
  return (req, res, next) => {
    let path = req.path;
    const versioned = /^\/(v\d+)(?=\/|$)(.*)$/.exec(path);
    if (versioned) {
      if (versioned[1] !== CURRENT_VERSION) throw new ApiError('UNSUPPORTED_VERSION', `API version ${versioned[1]} does not exist; the current version is ${CURRENT_VERSION}.`);
      path = versioned[2] || '/';
      res.locals.apiVersion = CURRENT_VERSION;
    } else if (path !== '/graphql') {
      throw new ApiError('NOT_FOUND', `No resource at ${req.path}; the API lives under /${CURRENT_VERSION}.`);
    }
    const route = routes.match(req.method, path);
    res.locals.route = route;
    res.locals.routePattern = versioned ? `/${CURRENT_VERSION}${route.pattern}` : route.pattern;
    for (const [name, value] of route.headers) res.setHeader(name, value);
    next();
  };
}

/** Reads the bearer token if one is sent; whether one is required is decided after rate limiting. */
export function identifyCaller(verifier: TokenVerifier): RequestHandler {
  return async (req, res, next) => {
    if (req.headers.authorization) {
      try {
        res.locals.principal = await verifier.verifyHeader(req.headers.authorization);
      } catch (error) {
        res.locals.authError = error;
      }
    }
    next();
  };
}

const readTokenRequest = express.json({ limit: '16kb' });

/** One point per request, keyed by user or client IP; the token route is limited per IP and per email. */
export function rateLimit(limits: RateLimits): RequestHandler {
  return async (req, res, next) => {
    const route = res.locals.route as CompiledRoute;
    const principal = res.locals.principal as Principal | undefined;
    const caller = principal ? `user:${principal.userId}` : `ip:${req.ip}`;
    // A refusal is a 429 ApiError that carries its own RateLimit and Retry-After headers.
    if (route.policy === 'tokens') {
      await new Promise<void>((resolve, reject) => readTokenRequest(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
      const email = typeof req.body?.email === 'string' ? req.body.email.trim().toLowerCase() : '';
      const [byIp, byEmail] = await Promise.all([limits.consume('tokens-ip', `ip:${req.ip}`), email ? limits.consume('tokens', `email:${email}`) : undefined]);
      for (const [name, value] of (byEmail ?? byIp).headers) res.setHeader(name, value);
    } else {
      for (const [name, value] of (await limits.consume(route.policy ?? 'default', caller)).headers) res.setHeader(name, value);
    }
    next();
  };
}

/** 401 for routes that need a token when none (or a bad one) came. */
export const requireAuthentication: RequestHandler = (_req, res, next) => {
  const route = res.locals.route as CompiledRoute;
  if (route.auth !== 'public' && !res.locals.principal) throw (res.locals.authError as ApiError | undefined) ?? ApiError.unauthenticated();
  next();
};

/** Hands the request to what serves its route. */
export function dispatch(handlers: Record<CompiledRoute['upstream'], RequestHandler | RequestHandler[]>): RequestHandler {
  return (req, res, next) => {
    const handler = handlers[(res.locals.route as CompiledRoute).upstream];
    const chain = Array.isArray(handler) ? handler : [handler];
    let index = 0;
    const step = (error?: unknown): void => {
      if (error) return next(error);
      const current = chain[index++];
      if (!current) return next();
      Promise.resolve(current(req, res, step)).catch(next);
    };
    step();
  };
}
