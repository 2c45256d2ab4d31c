import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Histogram, type LabelValues, Registry } from 'prom-client';
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

/** Drops every series of `metric` whose `label` is `value`: a ClientChosenLabel value that lost its place. */
export async function dropSeries(metric: Counter<string> | Histogram<string>, label: string, value: string): Promise<void> {
  const { values } = await metric.get();
  for (const { labels } of values) {
    if (labels[label] !== value) continue;
    const { le: _bucket, ...series } = labels; // a histogram's buckets are one series to remove
    metric.remove(series as LabelValues<string>);
  }
}

/** Callers counted per value: past this many, a value's standing no longer needs counting. */
const VOUCHERS_COUNTED = 100;

/**
 * A label whose values the client chooses (a User-Agent's product and version, a GraphQL
 * operation's name), kept bounded: at most `max` distinct values. Places go to the values the
 * most distinct callers send: once all are taken, a value sent by more callers than the weakest
 * held one takes its place (`onEvict` drops the series it had), else it counts as `other`. One
 * caller vouches for at most `perCaller` values, so its share is bounded however it varies what it
 * sends, and accounts made to fill the places (sign-up is open) hold them only against values
 * fewer real callers send than they have accounts to spare: forty accounts no longer hide every
 * client released after them; a release a few users run takes a place from made-up values.
 */
export class ClientChosenLabel {
  /** Values holding a place, with the callers that sent each (up to VOUCHERS_COUNTED). */
  private readonly held = new Map<string, Set<string>>();
  /** Values waiting for a place, oldest first, at most `max` of them: the oldest goes when a new one comes. */
  private readonly waiting = new Map<string, Set<string>>();
  /** Values vouched for, by caller: only callers in a held or waiting value's set are counted. */
  private readonly vouchedBy = new Map<string, number>();

  constructor(
    private readonly max: number,
    private readonly perCaller: number,
    /** A value lost its place: the series carrying it should go (the label is bounded by what is held). */
    private readonly onEvict: (value: string) => void = () => undefined,
  ) {}

  /** `value` as the label carries it for `caller` (a user id; unset: the unauthenticated share one). */
  valueOf(value: string, caller: string | undefined): string {
    const who = caller ?? '';
    const held = this.held.get(value);
    if (held) {
      this.vouch(held, who);
      return value;
    }
    if (this.held.size < this.max) {
      if (!this.vouch(new Set(), who, (callers) => this.held.set(value, callers))) return 'other';
      return value;
    }
    let waiting = this.waiting.get(value);
    if (!waiting) {
      if (!this.vouch(new Set(), who, (callers) => (waiting = callers))) return 'other';
      if (this.waiting.size >= this.max) this.forget(this.waiting, this.waiting.keys().next().value as string);
      this.waiting.set(value, waiting!);
    } else {
      this.vouch(waiting, who);
    }
    const weakest = this.weakestHeld();
    if (weakest === undefined || waiting!.size <= (this.held.get(weakest)?.size ?? 0)) return 'other';
    this.forget(this.held, weakest);
    this.onEvict(weakest);
    this.waiting.delete(value);
    this.held.set(value, waiting!);
    return value;
  }

  /**
   * Counts `caller` among `callers` if it may vouch for one more value (its `perCaller` share);
   * `place` puts a new set where it belongs first. False when the caller's share is spent.
   */
  private vouch(callers: Set<string>, caller: string, place?: (callers: Set<string>) => void): boolean {
    if (callers.has(caller)) return true;
    const vouched = this.vouchedBy.get(caller) ?? 0;
    if (vouched >= this.perCaller) return false;
    place?.(callers);
    if (callers.size >= VOUCHERS_COUNTED) return true;
    callers.add(caller);
    this.vouchedBy.set(caller, vouched + 1);
    return true;
  }

  /** Drops `value` from `from`, giving its callers their vouch back (they may vouch for another). */
  private forget(from: Map<string, Set<string>>, value: string): void {
    for (const caller of from.get(value) ?? []) {
      const vouched = (this.vouchedBy.get(caller) ?? 1) - 1;
      if (vouched > 0) this.vouchedBy.set(caller, vouched);
      else this.vouchedBy.delete(caller);
    }
    from.delete(value);
  }

  /** The held value the fewest callers sent; of several, the newest: the places held longest stay. */
  private weakestHeld(): string | undefined {
    let weakest: string | undefined;
    let fewest = Number.POSITIVE_INFINITY;
    for (const [value, callers] of this.held) {
      if (callers.size <= fewest) [weakest, fewest] = [value, callers.size];
    }
    return weakest;
  }
}
