// CORS: which browser origins may call the API, answered by the `cors` package. It sits before
// routing and authentication, because a browser sends its preflight without the Authorization
// header; a disallowed origin gets no CORS header at all and meets the pipeline as usual (an
// OPTIONS request then answers 405 with Allow).
import type { RequestHandler } from 'express';
import cors from 'cors';

/** What the development stack allows when CORS_ORIGINS is unset: a web app served from this machine. */
export const DEVELOPMENT_ORIGINS = ['http://localhost:*', 'http://127.0.0.1:*'];

/**
 * Request headers a browser app may send: the ones the API reads. X-Client-Name/-Version name the
 * app in usage records and deprecation notices; the SDK sends them when given `client`, so without
 * them here every call of such an app failed its preflight. (X-Api-Key stays out: keys are for servers.)
 */
const ALLOWED_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'if-match', 'if-none-match', 'traceparent', 'x-client-name', 'x-client-version'];

/** Response headers a browser app may read: paging, rate limits, tracing, caching, versioning. */
const EXPOSED_HEADERS = ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id', 'ETag', 'Location', 'Deprecation', 'Sunset', 'Link', 'Deprecated-Fields'];

/** Browsers cache a preflight at most this long (Chromium caps it at two hours). */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * `http://localhost:*` or `https://*.example.com`: `*` stands for one port or one host label,
 * never for a dot, colon or slash, so `https://*.example.com` cannot match `https://evil.com/.example.com`.
 * A lone `*` allows every origin.
 */
export function originMatcher(patterns: readonly string[]): (origin: string) => boolean {
  if (patterns.includes('*')) return () => true;
  const expressions = patterns.map(
    (pattern) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('[A-Za-z0-9-]+')}$`),
  );
  return (origin) => expressions.some((expression) => expression.test(origin));
}

export function crossOrigin(patterns: readonly string[]): RequestHandler {
  const allowed = originMatcher(patterns);
  const answer = cors({
    // The origin itself, never `*`, so responses vary by Origin and caches keep them apart.
    origin: (origin, callback) => callback(null, origin !== undefined && allowed(origin) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_S,
    optionsSuccessStatus: 204,
  });
  return (req, res, next) => {
    // On every answer, also those to no Origin or a disallowed one: the CORS headers depend on it,
    // so a shared cache must not hand an answer stored for one Origin (or none) to another. A
    // public answer (/v1/openapi.json) stored without it would reach an allowed app bare of
    // Access-Control-Allow-Origin, and its browser would refuse it until the entry expired.
    res.vary('Origin');
    if (req.headers.origin === undefined) return next();
    // Only a real preflight (OPTIONS with Access-Control-Request-Method) ends here; a plain OPTIONS goes on to its 405.
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] === undefined) return next();
    answer(req, res, next);
  };
}
