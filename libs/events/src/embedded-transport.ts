// The embedded transport, for `npm start` with no broker: the outbox table is the log. The relay
// "publishes" by giving committed rows their place in the published log (markPublished); each
// consumer reads the producers' logs over HTTP (GET /internal/events, service token, cursor by
// log position) and keeps its cursors in its own database. No extra process, no extra server.
// A read with nothing new waits (long poll, `wait`) until the producer's relay publishes, so an
// event reaches its consumer within milliseconds of its commit without reads every few ms.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { authenticate, type TokenVerifier } from '@platform/auth';
import { createOutgoingCalls, type HttpTarget, type OutgoingCalls } from '@platform/outgoing-calls';
import type { Logger } from '@platform/service-kit';
import { parseQuery, queryInt, z } from '@platform/validation';
import { Router } from 'express';
import { toCloudEvent } from './envelope';
import { publishedEventsAfter, type SqlClient, type StoredEvent } from './outbox';
import { onOutbox } from './outbox-signals';
import type { Consumption, Delivery, EventTransport, Subscription } from './transport';

const MAX_PAGE = 500;
/** The longest a read waits for new events: well inside the request timeout, and short enough not to hold a graceful stop. */
const MAX_WAIT_MS = 5_000;
/**
 * How often a waiting read looks again unwoken: another replica's relay publishes without waking
 * this process. Only where replicas share the database (PostgreSQL): an embedded one has one
 * process, whose relay wakes every read it publishes for (eventLogRoutes' `sharedDatabase`).
 */
const WAIT_RECHECK_MS = 250;

/** One page of a producer's published log. */
export interface EventLogPage {
  events: { position: string; event: Record<string, unknown> }[];
}

const eventLogQuery = z.strictObject({
  after: z.string().regex(/^\d{1,18}$/, 'must be a log position (a non-negative integer)').optional(),
  limit: queryInt({ min: 1, max: MAX_PAGE }).optional(),
  wait: queryInt({ min: 0, max: MAX_WAIT_MS }).optional(),
});

/**
 * GET /internal/events?after=<position>&limit=<n>&wait=<ms>: this service's published events
 * after a position, in log order, as CloudEvents; when there are none yet, the answer waits up
 * to `wait` ms (at most 5 s) for the relay to publish some. Service tokens only (the internal
 * audience).
 */
export function eventLogRoutes(db: SqlClient, service: string, internalVerifier: TokenVerifier, options: { sharedDatabase?: boolean } = {}): Router {
  const router = Router();
  // An embedded database has one process: its relay's wake is the only news, so a waiting read
  // asks the database once, not four times a second (each a PGlite query of the service's CPU).
  const recheckMs = options.sharedDatabase === false ? undefined : WAIT_RECHECK_MS;
  router.get('/internal/events', authenticate(internalVerifier), async (req, res) => {
    const { after = '0', limit = 100, wait: waitMs = 0 } = parseQuery(eventLogQuery, req.query);
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const events = await publishedEventsWithin(db, after, limit, Date.now() + waitMs, gone.signal, recheckMs);
    res.set('Cache-Control', 'no-store');
    res.json({ events: events.map((event) => ({ position: event.position, event: toCloudEvent(`/${service}`, event).toJSON() })) });
  });
  return router;
}

/**
 * The published events after `after`, waiting until `until` (or until the reader is gone) for some
 * to come: woken by this process's relay, and every `recheckMs` besides when one is given.
 */
async function publishedEventsWithin(db: SqlClient, after: string, limit: number, until: number, gone: AbortSignal, recheckMs: number | undefined): Promise<StoredEvent[]> {
  for (;;) {
    let woken!: () => void;
    const wake = new Promise<void>((resolve) => (woken = resolve));
    // Listening before reading: a publish between the read and the wait still wakes it.
    const stopListening = onOutbox(db, 'published', woken);
    try {
      const events = await publishedEventsAfter(db, after, limit);
      const left = until - Date.now();
      if (events.length || left <= 0 || gone.aborted) return events;
      const timer = setTimeout(woken, recheckMs === undefined ? left : Math.min(left, recheckMs));
      gone.addEventListener('abort', woken, { once: true });
      await wake;
      clearTimeout(timer);
      gone.removeEventListener('abort', woken);
    } finally {
      stopListening();
    }
  }
}

/**
 * Where each consumer has read each producer's log to, in the consumer's database, and which of
 * its replicas reads it now. Several replicas of one consuming service share its database and so
 * its cursors; each cursor row carries a lease (`leased_by`, `leased_until`, on the database's
 * clock), and only the replica holding it reads that producer's log, so an event is not handled
 * by two replicas at once. The holder renews it while it reads; a replica that stops gives it up;
 * one that dies loses it when it runs out, and another replica takes the log over from the cursor.
 */
export function sqlCursorStore(db: SqlClient) {
  return {
    /**
     * Takes or renews `holder`'s lease on `source`'s cursor for `leaseMs`, and returns the cursor;
     * undefined while another replica holds an unexpired lease.
     */
    async claim(source: string, holder: string, leaseMs: number): Promise<string | undefined> {
      const [row] = await db.$queryRawUnsafe<{ position: string }[]>(
        `INSERT INTO event_cursors (source, position, leased_by, leased_until) VALUES ($1, 0, $2, now() + $3::int * interval '1 millisecond')
         ON CONFLICT (source) DO UPDATE SET leased_by = EXCLUDED.leased_by, leased_until = EXCLUDED.leased_until
           WHERE event_cursors.leased_by IS NOT DISTINCT FROM EXCLUDED.leased_by OR event_cursors.leased_until IS NULL OR event_cursors.leased_until < now()
         RETURNING position::text AS position`,
        source,
        holder,
        Math.round(leaseMs),
      );
      return row?.position;
    },
    /** Moves the cursor up to `position` if `holder` still holds the lease; false when it lost it (another replica reads on from the cursor). */
    async advance(source: string, holder: string, position: string): Promise<boolean> {
      const updated = await db.$executeRawUnsafe(
        `UPDATE event_cursors SET position = GREATEST(position, $3::bigint), updated_at = now() WHERE source = $1 AND leased_by = $2`,
        source,
        holder,
        position,
      );
      return updated > 0;
    },
    /** Gives the lease up (a replica stopping), so another replica takes the log over at once. */
    async release(source: string, holder: string): Promise<void> {
      await db.$executeRawUnsafe(`UPDATE event_cursors SET leased_by = NULL, leased_until = NULL WHERE source = $1 AND leased_by = $2`, source, holder);
    },
    /** The cursor, read only (operators, tests). */
    async get(source: string): Promise<string> {
      const [row] = await db.$queryRawUnsafe<{ position: string }[]>(`SELECT position::text AS position FROM event_cursors WHERE source = $1`, source);
      return row?.position ?? '0';
    },
  };
}

export type CursorStore = ReturnType<typeof sqlCursorStore>;

export interface EmbeddedTransportSettings {
  /** Base URLs of the producing services, by name (`users-service`). */
  producers: Record<string, string>;
  /** The app's outgoing-call factory (libs/outgoing-calls), which reads the logs; without it, one is made with `serviceToken`. */
  calls?: OutgoingCalls;
  /** A service token for the producers' /internal/events, when no `calls` is given. */
  serviceToken?: () => Promise<string>;
  /** Where consumed positions are kept (the consumer's database). */
  cursors?: CursorStore;
  logger: Logger;
  /** Pause between reads of a log that had nothing new. */
  pollMs?: number;
  /** How long a read with nothing new waits at the producer (long poll); 0 reads and returns. */
  waitMs?: number;
  pageSize?: number;
  /**
   * How long a replica's hold on a producer's log lasts unrenewed (default 10 s): after a replica
   * died, another takes the log over within it. Renewed once a third of it is gone while a page is handled, and before a read that it might not cover.
   */
  leaseMs?: number;
  /** This replica's name in the leases (default: host, process id and a random suffix). */
  replica?: string;
  /** How long a producer never read yet may stay unreachable before it is warned of (default PRODUCER_START_GRACE_MS). */
  startGraceMs?: number;
}

/**
 * Services start in any order (`npm start`, a rollout, a whole cluster coming up), so a consumer
 * often asks a producer's log before the producer listens. Until a log has been read once and
 * within this time, a failed read is one info line (`waiting for an event log`) rather than a
 * warning with a stack trace per producer at every start; past it, or after a first read, a
 * failure warns as before (the runbook's `reading an event log failed`).
 */
export const PRODUCER_START_GRACE_MS = 30_000;

/** An error's message and its cause's, in one line (`…unavailable; retry shortly.: connect ECONNREFUSED …`), without the stacks. */
function failureReason(error: unknown): string {
  const messageOf = (value: unknown) => (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string' ? (value as { message: string }).message : undefined);
  const message = messageOf(error) ?? String(error);
  const cause = messageOf((error as { cause?: unknown } | null)?.cause); // a socket's error comes from another realm under test runners: no instanceof
  return cause ? `${message}: ${cause}` : message;
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

/**
 * One page of a producer's log, through the outgoing-call factory (service token, trace, metrics,
 * the failure rule), within `timeoutMs` or until `signal` aborts (a stop).
 */
async function readLogPage(producer: HttpTarget, path: string, signal: AbortSignal, timeoutMs: number): Promise<EventLogPage> {
  const answer = await producer.request({ operation: 'event-log', path, headers: { accept: 'application/json' }, credential: 'service', timeoutMs, signal, json: true });
  if (answer.status >= 300) throw new Error(`${producer.target} answered ${answer.status} for its event log`);
  return answer.body as EventLogPage;
}

export class EmbeddedTransport implements EventTransport {
  readonly kind = 'embedded';
  private readonly replica: string;
  private readonly producers = new Map<string, HttpTarget>();

  constructor(private readonly settings: EmbeddedTransportSettings) {
    this.replica = settings.replica ?? `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  }

  /** The HTTP target of one producer (`users-service` is the target `users` in metrics and errors). */
  private producer(source: string): HttpTarget | undefined {
    const base = this.settings.producers[source];
    if (!base) return undefined;
    let producer = this.producers.get(source);
    if (!producer) {
      producer = (this.settings.calls ?? createOutgoingCalls({ serviceToken: this.settings.serviceToken })).http(source.replace(/-service$/, ''), base, { connections: 2 });
      this.producers.set(source, producer);
    }
    return producer;
  }

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

  async close(): Promise<void> {
    await Promise.all([...this.producers.values()].map((producer) => producer.close()));
    this.producers.clear();
  }

  /**
   * Reads one producer's log from the stored cursor on, handing each event over in order until it
   * is consumed, while this replica holds the log's lease; otherwise waits for it.
   */
  private async follow(source: string, cursors: CursorStore, handle: (delivery: Delivery) => Promise<void>, signal: AbortSignal): Promise<void> {
    const producer = this.producer(source);
    if (!producer) throw new Error(`no address for event source ${source}`);
    const pollMs = this.settings.pollMs ?? 200;
    const pageSize = this.settings.pageSize ?? 100;
    const waitMs = Math.min(this.settings.waitMs ?? 2_000, MAX_WAIT_MS);
    const leaseMs = Math.max(this.settings.leaseMs ?? 10_000, waitMs + 1_000);
    const lease = new LogLease(cursors, source, this.replica, leaseMs, waitMs, this.settings.logger);
    const graceEndsAt = Date.now() + (this.settings.startGraceMs ?? PRODUCER_START_GRACE_MS);
    let readOnce = false;
    let waitingLogged = false;
    let failures = 0;
    try {
      while (!signal.aborted) {
        try {
          const after = await lease.take();
          if (after === undefined) {
            await sleep(leaseMs / 3, signal); // another replica reads this log: look again within a third of its lease
            continue;
          }
          const asked = Date.now();
          const page = await readLogPage(producer, `/internal/events?after=${after}&limit=${pageSize}&wait=${waitMs}`, signal, waitMs + 10_000);
          readOnce = true;
          // The lease is renewed while the page is handled (its handlers may take long); once it
          // is lost, no further event of the page is handed over.
          const renewal = lease.renewWhileHandling();
          // The cursor moves once a page (one write, not one an event): a crash mid-page hands the
          // page's handled events over again, which consumers drop as duplicates.
          let handledTo: string | undefined;
          try {
            page: for (const entry of page.events) {
              for (let attempt = 1; ; attempt++) {
                if (signal.aborted) return;
                if (renewal.lost()) break page;
                try {
                  await handle({ event: entry.event, attempt });
                  break;
                } catch {
                  // The consumer parks the event after its attempts; until then, back off and retry.
                  await sleep(Math.min(100 * 2 ** attempt, 5_000), signal);
                }
              }
              handledTo = entry.position;
            }
          } finally {
            renewal.stop();
            await lease.handled(handledTo, renewal.lost());
          }
          failures = 0;
          // A read that waited its time for nothing goes again at once; one answered empty sooner
          // (no long poll asked for, or a producer of a version without it) pauses first.
          if (!page.events.length && (waitMs === 0 || Date.now() - asked < waitMs)) await sleep(pollMs, signal);
        } catch (error) {
          if (signal.aborted) return;
          if (!readOnce && Date.now() < graceEndsAt) {
            if (!waitingLogged) this.settings.logger.info({ source, reason: failureReason(error) }, 'waiting for an event log: its producer is not answering yet');
            waitingLogged = true;
            await sleep(pollMs * 2, signal);
            continue;
          }
          failures++;
          if (failures === 1 || failures % 50 === 0) this.settings.logger.warn({ err: error, source, failures }, 'reading an event log failed; trying again');
          await sleep(Math.min(pollMs * 2 ** Math.min(failures, 5), 5_000), signal);
        }
      }
    } finally {
      await lease.release(); // stopping: another replica takes the log over at once rather than when the lease ends
    }
  }
}

/**
 * One replica's hold on reading one producer's log, kept in the cursor store so that one replica
 * reads a log at a time: the cursor it reads from, and when it last took or renewed the lease.
 * A renewal is a write: it is skipped while the lease, as last renewed, still covers the next
 * read (up to waitMs) and the first renewal during its page's handling (a third of the lease).
 */
class LogLease {
  private holding = false;
  private position = '0';
  private claimedAt = 0;
  private readonly renewAfterMs: number;

  constructor(
    private readonly cursors: CursorStore,
    private readonly source: string,
    private readonly holder: string,
    private readonly leaseMs: number,
    waitMs: number,
    private readonly logger: Logger,
  ) {
    this.renewAfterMs = (leaseMs * 2) / 3 - waitMs;
  }

  /** Where to read after, the lease kept or taken; undefined while another replica holds it. */
  async take(): Promise<string | undefined> {
    const now = Date.now();
    if (this.holding && now - this.claimedAt < this.renewAfterMs) return this.position;
    const after = await this.cursors.claim(this.source, this.holder, this.leaseMs);
    this.claimedAt = now; // the lease runs from the claim's statement, which is no earlier
    if (after === undefined) {
      if (this.holding) this.logger.info({ source: this.source, replica: this.holder }, 'another replica holds this event log now');
      this.holding = false;
      return undefined;
    }
    this.holding = true;
    this.position = after;
    return after;
  }

  /** Renews the lease every third of it while a page is handled; `lost()` is true once another replica has it. */
  renewWhileHandling(): { lost: () => boolean; stop: () => void } {
    let lost = false;
    const renewal = setInterval(() => {
      const renewedAt = Date.now();
      this.cursors.claim(this.source, this.holder, this.leaseMs).then(
        (renewed) => {
          lost ||= renewed === undefined;
          if (!lost) this.claimedAt = renewedAt;
        },
        () => undefined, // the next renewal or the cursor's advance tells
      );
    }, this.leaseMs / 3);
    return { lost: () => lost, stop: () => clearInterval(renewal) };
  }

  /** A page handled up to `handledTo` (unset: none of it): the cursor moves there, unless the lease was lost. */
  async handled(handledTo: string | undefined, lost: boolean): Promise<void> {
    if (handledTo && !(await this.cursors.advance(this.source, this.holder, handledTo))) this.holding = false;
    else if (handledTo) this.position = handledTo;
    if (lost) this.holding = false;
  }

  async release(): Promise<void> {
    if (this.holding) await this.cursors.release(this.source, this.holder).catch(() => undefined);
  }
}
