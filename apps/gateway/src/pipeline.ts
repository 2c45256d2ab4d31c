// The gateway's own pipeline steps, in the order app.ts runs them. Proxied requests are never
// body-parsed (the token route's body excepted): limits are checked on headers, so bodies stream
// straight to the service.
import type { RequestHandler } from 'express';
import type { TokenVerifier } from '@platform/auth';
import { ApiError, MAX_BODY_BYTES } from '@platform/errors';
import { TIMEOUT_HEADER } from '@platform/service-kit';
import type { CallerCredentials } from './auth/credentials';
import type { CompiledRoute, RouteTable } from './routing/router';

export const CURRENT_VERSION = 'v1';

/** Headers only the gateway sets for a service; a client's are dropped, never believed. */
const INTERNAL_HEADERS = [TIMEOUT_HEADER, 'x-forwarded-prefix'];
/** Headers only a proxy in front of the gateway may set. */
const PROXY_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'forwarded'];

/**
 * First step: a client cannot set the deadline, prefix or forwarding facts the gateway and the
 * services act on. X-Forwarded-* stay only when the peer is a trusted proxy (`trust proxy`).
 */
export function dropInternalHeaders(trustProxy: (address: string, hop: number) => boolean): RequestHandler {
  return (req, _res, next) => {
    const headers = req.headers;
    for (const name of INTERNAL_HEADERS) if (headers[name] !== undefined) delete headers[name];
    if (PROXY_HEADERS.some((name) => headers[name] !== undefined) && !trustProxy(req.socket.remoteAddress ?? '', 0)) {
      for (const name of PROXY_HEADERS) delete headers[name];
    }
    next();
  };
}

/**
 * 400 for a request the gateway cannot forward as it read it: a transfer coding other than
 * chunked (Node's parser refuses the other ambiguous framings itself), or a path whose
 * %-encoding does not decode.
 */
export const requireWellFormedRequest: RequestHandler = (req, _res, next) => {
  const transferEncoding = req.headers['transfer-encoding'];
  if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
    throw new ApiError('MALFORMED_REQUEST', 'Transfer-Encoding may only be chunked.', { headers: { Connection: 'close' } });
  }
  if (req.url.includes('%')) {
    try {
      decodeURIComponent(req.path);
    } catch {
      throw new ApiError('MALFORMED_REQUEST', 'The path has a malformed %-encoding.');
    }
  }
  next();
};

/** 413 before a byte is forwarded when Content-Length says the body is over 1 MiB (a chunked body is counted as it is forwarded). */
export const limitBodySize: RequestHandler = (req, _res, next) => {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    // The refused body is read and discarded rather than the connection closed under it: a client
    // still sending would otherwise meet a reset and never read this 413 (RFC 9112 §9.6). Reading
    // is bounded by the server's time to receive a request (REQUEST_TIMEOUT_MS).
    throw ApiError.payloadTooLarge();
  }
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

/**
 * Reads the bearer token if one is sent, and refuses one its account outlived (a changed password,
 * a deleted user); whether a token is required is decided after rate limiting.
 */
export function identifyCaller(verifier: TokenVerifier, credentials: CallerCredentials): RequestHandler {
  return async (req, res, next) => {
    if (req.headers.authorization) {
      try {
        const principal = await verifier.verifyHeader(req.headers.authorization);
        await credentials.assertCurrent(principal);
        res.locals.principal = principal;
      } catch (error) {
        res.locals.authError = error;
      }
    }
    next();
  };
}

/** 401 for routes that need a token when none (or a bad one) came. */
export const requireAuthentication: RequestHandler = (_req, res, next) => {
  const route = res.locals.route as CompiledRoute;
  if (route.auth !== 'public' && !res.locals.principal) throw res.locals.authError ?? ApiError.unauthenticated();
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
