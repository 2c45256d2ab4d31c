import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { routeOf } from './request-log';

export interface Metrics {
  registry: Registry;
  middleware: RequestHandler;
  handler: RequestHandler;
}

/** Prometheus metrics: process defaults plus request count and latency by route and status. */
export function createMetrics(service: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames: ['method', 'route', 'status'], registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency',
    labelNames: ['method', 'route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const middleware: RequestHandler = (req, res, next) => {
    const stop = duration.startTimer();
    res.on('finish', () => {
      const route = routeOf(req);
      requests.inc({ method: req.method, route, status: String(res.statusCode) });
      stop({ method: req.method, route });
    });
    next();
  };
  const handler: RequestHandler = async (_req, res) => {
    res.type(registry.contentType).send(await registry.metrics());
  };
  return { registry, middleware, handler };
}

/**
 * A label whose values the client chooses (a User-Agent's product and version, a GraphQL
 * operation's name), kept bounded: at most `max` distinct values in all, and at most `perCaller`
 * new ones brought by any one caller; past either, `other`. Without the share, one account's
 * made-up values took every place, and each real value that came later (a new SDK version, a new
 * operation) counted as `other` until a restart.
 */
export class ClientChosenLabel {
  private readonly seen = new Set<string>();
  /** New values brought, by caller: never more entries than `seen` has. */
  private readonly broughtBy = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly perCaller: number,
  ) {}

  /** `value` as the label carries it for `caller` (a user id; unset: the unauthenticated share one). */
  valueOf(value: string, caller: string | undefined): string {
    if (this.seen.has(value)) return value;
    const brought = this.broughtBy.get(caller ?? '') ?? 0;
    if (this.seen.size >= this.max || brought >= this.perCaller) return 'other';
    this.broughtBy.set(caller ?? '', brought + 1);
    this.seen.add(value);
    return value;
  }
}
