// The gateway's own pipeline steps, in the order app.ts runs them. Proxied requests are never
// body-parsed (the token route's body excepted): limits are checked on headers, so bodies stream
// straight to the service.
import type { Request, RequestHandler, Response } from 'express';
import type { Principal, TokenVerifier } from '@platform/auth';
import { ApiError, MAX_BODY_BYTES } from '@platform/errors';
import { parseJsonBody, TIMEOUT_HEADER } from '@platform/service-kit';
import type { CallerCredentials } from './auth/credentials';
import type { RateLimits } from './rate-limit/rate-limits';
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
    throw new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
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

/** Whose budgets a request spends: the user's with a token, the client IP's without. */
function callerOf(req: Request, res: Response): string {
  const principal = res.locals.principal as Principal | undefined;
  return (res.locals.caller ??= principal ? `user:${principal.userId}` : `ip:${req.ip}`) as string;
}

/** 429 past `maxPerCaller` requests in flight for one caller: a few callers cannot hold every connection. */
export function limitInFlight(maxPerCaller: number): RequestHandler {
  const inFlight = new Map<string, number>();
  return (req, res, next) => {
    const caller = callerOf(req, res);
    const count = inFlight.get(caller) ?? 0;
    if (count >= maxPerCaller) throw new ApiError('RATE_LIMITED', `At most ${maxPerCaller} requests at once; retry when one has been answered.`, { headers: { 'Retry-After': '1' } });
    inFlight.set(caller, count + 1);
    res.once('close', () => {
      const left = (inFlight.get(caller) ?? 1) - 1;
      if (left > 0) inFlight.set(caller, left);
      else inFlight.delete(caller);
    });
    next();
  };
}

/** Reads a token request as the users service will (any JSON media type), keeping its bytes to forward as they came. */
const readTokenRequest = parseJsonBody({
  limit: '16kb',
  inflate: false,
  verify: (_req, res, body) => void ((res as Response).locals.forwardBody = body),
});

/** One point per request, keyed by user or client IP; the token route is limited per IP and per email. */
export function rateLimit(limits: RateLimits): RequestHandler {
  return async (req, res, next) => {
    const route = res.locals.route as CompiledRoute;
    // A refusal is a 429 ApiError that carries its own RateLimit and Retry-After headers.
    if (route.policy === 'tokens') {
      // A body it cannot read is refused here (400 MALFORMED_JSON, 413, 415). One read without
      // an email can never be granted a token, so it only spends its IP's points.
      await new Promise<void>((resolve, reject) => readTokenRequest(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
      const email = typeof req.body?.email === 'string' ? req.body.email.trim().toLowerCase() : '';
      const [byIp, byEmail] = await Promise.all([limits.consume('tokens-ip', `ip:${req.ip}`), email ? limits.consume('tokens', `email:${email}`) : undefined]);
      for (const [name, value] of (byEmail ?? byIp).headers) res.setHeader(name, value);
    } else {
      for (const [name, value] of (await limits.consume(route.policy ?? 'default', callerOf(req, res))).headers) res.setHeader(name, value);
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
