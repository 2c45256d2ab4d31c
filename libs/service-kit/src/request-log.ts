import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

/**
 * The route pattern (`/users/:id`), not the raw path, so logs and metrics group by endpoint. An
 * app that routes without express routes (the gateway's route table) sets `res.locals.routePattern`.
 */
export function routeOf(req: { baseUrl: string; route?: { path?: unknown }; res?: { locals: Record<string, unknown> } }): string {
  const pattern = req.res?.locals.routePattern;
  if (typeof pattern === 'string') return pattern;
  const path = req.route?.path;
  return typeof path === 'string' ? `${req.baseUrl}${path}` || '/' : 'unmatched';
}

/** One JSON line per request: trace id, route, status, duration. 5xx lines carry the cause. */
export function requestLog(logger: Logger, options: { quietPaths?: string[] } = {}): RequestHandler {
  // Machine polling, not client requests: probes, scrapes, and the event consumers reading a
  // producer's outbox (libs/events' embedded transport, several times a second per consumer).
  const quiet = new Set(options.quietPaths ?? ['/healthz', '/readyz', '/metrics', '/internal/events']);
  // The request line's fields are the few named below, none of them a credential (the path
  // without its query), so its line skips the redaction every other line goes through: about
  // 8 µs a request (docs/benchmarks.md). A failed request's line carries the error: redacted.
  const lines = logger.child({}, { redact: [] });
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = routeOf(req);
      // Traces group by endpoint too: the server span is named after the route pattern.
      res.locals.span?.updateName(`${req.method} ${route}`).setAttribute('http.route', route);
      if (quiet.has(req.path) && res.statusCode < 500) return;
      const entry = {
        traceId: res.locals.traceId,
        method: req.method,
        route,
        path: req.originalUrl.split('?')[0],
        status: res.statusCode,
        durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        userId: (res.locals.principal as { userId?: string } | undefined)?.userId,
      };
      if (res.statusCode >= 500) logger.error({ ...entry, err: res.locals.errorCause }, 'request failed');
      else lines.info(entry, 'request');
    });
    next();
  };
}
