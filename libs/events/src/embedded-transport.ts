// The embedded transport, for `npm start` with no broker: the outbox table is the log. The relay
// "publishes" by giving committed rows their place in the published log (markPublished); each
// consumer reads the producers' logs over HTTP (GET /internal/events, service token, cursor by
// log position) and keeps its cursors in its own database. No extra process, no extra server.
import { authenticate, type TokenVerifier } from '@platform/auth';
import { ApiError } from '@platform/errors';
import type { Logger } from '@platform/service-kit';
import { Router } from 'express';
import { toCloudEvent } from './envelope';
import { publishedEventsAfter, type SqlClient } from './outbox';
import type { Consumption, Delivery, EventTransport, Subscription } from './transport';

const MAX_PAGE = 500;

/** One page of a producer's published log. */
export interface EventLogPage {
  events: { position: string; event: Record<string, unknown> }[];
}

/**
 * GET /internal/events?after=<position>&limit=<n>: this service's published events after a
 * position, in log order, as CloudEvents. Service tokens only (the internal audience).
 */
export function eventLogRoutes(db: SqlClient, service: string, internalVerifier: TokenVerifier): Router {
  const router = Router();
  router.get('/internal/events', authenticate(internalVerifier), async (req, res) => {
    const after = String(req.query.after ?? '0');
    const limit = Number(req.query.limit ?? 100);
    if (!/^\d{1,18}$/.test(after) || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
      throw ApiError.unprocessable('after must be a log position and limit 1 to 500.', [{ field: 'after', code: 'INVALID_FORMAT', message: 'A non-negative integer.' }]);
    }
    const events = await publishedEventsAfter(db, after, limit);
    res.set('Cache-Control', 'no-store');
    res.json({ events: events.map((event) => ({ position: event.position, event: toCloudEvent(`/${service}`, event).toJSON() })) });
  });
  return router;
}

/** Where each consumer has read each producer's log to, in the consumer's database. */
export function sqlCursorStore(db: SqlClient) {
  return {
    async get(source: string): Promise<string> {
      const [row] = await db.$queryRawUnsafe<{ position: string }[]>(`SELECT position::text AS position FROM event_cursors WHERE source = $1`, source);
      return row?.position ?? '0';
    },
    async set(source: string, position: string): Promise<void> {
      await db.$executeRawUnsafe(
        `INSERT INTO event_cursors (source, position) VALUES ($1, $2::bigint) ON CONFLICT (source) DO UPDATE SET position = GREATEST(event_cursors.position, EXCLUDED.position), updated_at = now()`,
        source,
        position,
      );
    },
  };
}

export type CursorStore = ReturnType<typeof sqlCursorStore>;

export interface EmbeddedTransportSettings {
  /** Base URLs of the producing services, by name (`users-service`). */
  producers: Record<string, string>;
  /** A service token for the producers' /internal/events. */
  serviceToken: () => Promise<string>;
  /** Where consumed positions are kept (the consumer's database). */
  cursors?: CursorStore;
  logger: Logger;
  /** Pause between reads of a log that had nothing new. */
  pollMs?: number;
  pageSize?: number;
}

/** Waits `ms`, or less when `signal` aborts; leaves no listener behind on the long-lived signal. */
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/** A GET whose JSON answer must arrive within `timeoutMs` (or before `signal` aborts), without adding to the signal's listeners for good. */
async function getJsonWithin(url: string, init: RequestInit, signal: AbortSignal, timeoutMs: number): Promise<unknown> {
  const request = new AbortController();
  const abort = () => request.abort();
  signal.addEventListener('abort', abort, { once: true });
  const timer = setTimeout(abort, timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: request.signal });
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    return await response.json();
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', abort);
  }
}

export class EmbeddedTransport implements EventTransport {
  readonly kind = 'embedded';

  constructor(private readonly settings: EmbeddedTransportSettings) {}

  /** The outbox rows are the log: once the relay marks them they are readable, so there is nothing to send. */
  publish(): Promise<void> {
    return Promise.resolve();
  }

  async consume(subscription: Subscription, handle: (delivery: Delivery) => Promise<void>): Promise<Consumption> {
    const cursors = this.settings.cursors;
    if (!cursors) throw new Error('the embedded transport needs a cursor store to consume');
    const stopping = new AbortController();
    const loops = subscription.sources.map((source) => this.follow(source, cursors, handle, stopping.signal));
    return {
      stop: async () => {
        stopping.abort();
        await Promise.all(loops);
      },
    };
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Reads one producer's log from the stored cursor on, handing each event over in order until it is consumed. */
  private async follow(source: string, cursors: CursorStore, handle: (delivery: Delivery) => Promise<void>, signal: AbortSignal): Promise<void> {
    const base = this.settings.producers[source];
    if (!base) throw new Error(`no address for event source ${source}`);
    const pollMs = this.settings.pollMs ?? 200;
    const pageSize = this.settings.pageSize ?? 100;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const after = await cursors.get(source);
        const page = (await getJsonWithin(
          `${base}/internal/events?after=${after}&limit=${pageSize}`,
          { headers: { authorization: `Bearer ${await this.settings.serviceToken()}`, accept: 'application/json' } },
          signal,
          10_000,
        )) as EventLogPage;
        for (const entry of page.events) {
          for (let attempt = 1; ; attempt++) {
            if (signal.aborted) return;
            try {
              await handle({ event: entry.event, attempt });
              break;
            } catch {
              // The consumer parks the event after its attempts; until then, back off and retry.
              await sleep(Math.min(100 * 2 ** attempt, 5_000), signal);
            }
          }
          await cursors.set(source, entry.position);
        }
        failures = 0;
        if (page.events.length < pageSize) await sleep(pollMs, signal);
      } catch (error) {
        if (signal.aborted) return;
        failures++;
        if (failures === 1 || failures % 50 === 0) this.settings.logger.warn({ err: error, source, failures }, 'reading an event log failed; trying again');
        await sleep(Math.min(pollMs * 2 ** Math.min(failures, 5), 5_000), signal);
      }
    }
  }
}
