// The consuming side, the same over every transport: each received event is checked (envelope
// and data schema), passed over when already handled or older than what was handled for its
// aggregate (processed_events keeps the last sequence per aggregate), handled, then recorded.
// Handlers are idempotent themselves, since a crash between handling and recording hands the
// event over again. An event a handler keeps failing on is parked in dead_letter_events after
// `maxAttempts`, so it never blocks the events behind it for longer than its retries.
import type { Logger } from '@platform/service-kit';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { isEventType } from './catalog';
import { type DeadLetter, DeadLetters, type EventHandlers, handlerOf, RESOLVED_RETENTION_MS } from './dead-letters';
import { fromCloudEventJson, MalformedEvent, type ReceivedEvent } from './envelope';
import type { SqlClient, SqlDatabase } from './outbox';
import type { Consumption, Delivery, EventTransport } from './transport';

export interface ConsumerSettings {
  /** The consuming service's name. */
  consumer: string;
  /** The producing services whose events it reads. */
  sources: readonly string[];
  handlers: EventHandlers;
  /** Deliveries of one event before it is parked as dead. */
  maxAttempts?: number;
  /**
   * The longest one handler call may take (ms, default 25 s: inside NATS's 30 s ack wait, so the
   * consumer gives up before the broker redelivers beside a running handler); past it the
   * delivery counts as a failed attempt, so a handler that hangs (a call without a deadline)
   * parks its event after `maxAttempts` instead of holding its partition forever.
   */
  handlerTimeoutMs?: number;
  /** How often resolved dead letters are purged once started (ms, default PURGE_EVERY_MS: an hour). */
  purgeEveryMs?: number;
}

/** A handler that took longer than its time: the delivery fails like one whose handler threw. */
export class HandlerTimeout extends Error {
  constructor(type: string, timeoutMs: number) {
    super(`the ${type} handler did not finish within ${timeoutMs} ms`);
  }
}

/**
 * How often resolved dead letters are purged: on a timer from start() to stop(), so a consumer
 * that receives nothing for months still purges them (letters are resolved by operators' replays,
 * not by deliveries), and by deliveries, at most this often, as the relay purges published outbox
 * rows after its passes.
 */
const PURGE_EVERY_MS = 60 * 60 * 1000;
/** Resolved letters deleted by one purge: a few hundred a day are a mass parking already. */
const PURGE_BATCH = 1_000;

export type HandleOutcome = 'handled' | 'duplicate' | 'ignored' | 'parked';

export class EventConsumer {
  private consumption: Consumption | undefined;
  private readonly maxAttempts: number;
  private readonly handlerTimeoutMs: number;
  private readonly outcomes: Counter;
  private readonly redeliveries: Counter;
  private readonly lag: Histogram;
  private lastPurge = 0;
  private readonly purgeEveryMs: number;
  private purgeTimer: NodeJS.Timeout | undefined;
  private starting: Promise<void> | undefined;
  private stopping = false;
  /** The purge under way, if any: the timer and a delivery never run two at once, and stop() waits for it. */
  private purging: Promise<void> | undefined;
  /** This consumer's parked events (the operators' routes use one built alike: `deadLettersOf`). */
  readonly deadLetterStore: DeadLetters;

  constructor(
    private readonly db: SqlDatabase,
    private readonly transport: EventTransport,
    private readonly logger: Logger,
    private readonly settings: ConsumerSettings,
    registry?: Registry,
  ) {
    this.maxAttempts = settings.maxAttempts ?? 5;
    this.handlerTimeoutMs = settings.handlerTimeoutMs ?? 25_000;
    this.purgeEveryMs = settings.purgeEveryMs ?? PURGE_EVERY_MS;
    this.deadLetterStore = deadLettersOf(db, settings.handlers, logger);
    const registers = registry ? [registry] : [];
    this.outcomes = new Counter({ name: 'events_consumed_total', help: 'Events received, by source, type and outcome', labelNames: ['source', 'type', 'outcome'], registers });
    this.redeliveries = new Counter({ name: 'events_redelivered_total', help: 'Deliveries after the first of one event (a handler failed or a process died mid-way)', labelNames: ['source'], registers });
    this.lag = new Histogram({
      name: 'events_consumer_lag_seconds',
      help: 'From the write of an event to its handling here',
      labelNames: ['source'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    if (registry) {
      const db = this.db;
      new Gauge({
        name: 'events_dead_letters_waiting',
        help: 'Events this consumer parked that no operator has replayed yet (GET /internal/dead-letters)',
        registers,
        async collect() {
          const [row] = await db.$queryRawUnsafe<{ count: number }[]>(`SELECT count(*)::int AS count FROM dead_letter_events WHERE replayed_at IS NULL`);
          this.set(Number(row.count));
        },
      });
      const { consumer, sources } = settings;
      const pending = transport.pending?.bind(transport);
      new Gauge({
        name: 'events_consumer_pending',
        help: 'Events the broker holds for this consumer, not yet acknowledged, by source (NATS; the embedded log does not say)',
        labelNames: ['source'],
        registers,
        async collect() {
          if (pending) for (const source of sources) this.set({ source }, await pending(consumer, source));
        },
      });
    }
  }

  /** Starts consuming once: a second call answers the first's promise. */
  start(): Promise<void> {
    this.starting ??= (async () => {
      this.consumption = await this.transport.consume({ consumer: this.settings.consumer, sources: this.settings.sources, types: Object.keys(this.settings.handlers) }, (delivery) =>
        this.deliver(delivery).then(() => undefined),
      );
      // A stop() that came while the broker set the consumption up ends it; no timer after it.
      if (this.stopping) return;
      // unref: the timer alone never keeps a process alive; stop() ends it.
      this.purgeTimer ??= setInterval(() => void this.purgeResolved(), this.purgeEveryMs).unref();
    })();
    return this.starting;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // A start() under way (a shutdown while the process starts) finishes first, so the
    // consumption it sets up is the one stopped here and not left pulling after the stop.
    await this.starting?.catch(() => undefined);
    clearInterval(this.purgeTimer);
    this.purgeTimer = undefined;
    await this.consumption?.stop();
    // The database closes after the consumer: a purge under way finishes first.
    await this.purging;
  }

  /**
   * One delivery: resolves when the event is consumed (handled, passed over or parked); rejects to
   * have it delivered again. Now and then it purges the dead letters resolved long ago.
   */
  async deliver(delivery: Delivery): Promise<HandleOutcome> {
    const outcome = await this.consume(delivery);
    await this.purgeResolvedNowAndThen();
    return outcome;
  }

  private async consume(delivery: Delivery): Promise<HandleOutcome> {
    const source = String(delivery.event.source ?? '').replace(/^\//, '');
    if (delivery.attempt > 1) this.redeliveries.inc({ source });
    // Parking what it does not handle (a producer deployed ahead) filled its dead letters and paged.
    const type = String(delivery.event.type ?? '');
    const handler = handlerOf(this.settings.handlers, type);
    if (!handler) return this.count(source, isEventType(type) ? type : 'unknown', 'ignored');
    let event: ReceivedEvent;
    try {
      event = fromCloudEventJson(delivery.event);
    } catch (error) {
      if (!(error instanceof MalformedEvent)) throw error;
      await this.park(delivery.event, error.message, delivery.attempt);
      return this.count(source, type, 'parked');
    }
    if ((await this.lastSequence(this.db, event)) >= event.sequence) return this.count(source, event.type, 'duplicate');
    try {
      await this.within(handler(event), event.type);
    } catch (error) {
      if (delivery.attempt < this.maxAttempts) {
        this.logger.warn({ err: error, eventId: event.id, type: event.type, attempt: delivery.attempt }, 'event handler failed; the event comes again');
        throw error;
      }
      await this.park(delivery.event, error instanceof Error ? error.message : String(error), delivery.attempt);
      return this.count(source, event.type, 'parked');
    }
    await this.markHandled(event);
    this.lag.observe({ source }, Math.max(0, (Date.now() - Date.parse(event.time)) / 1000));
    return this.count(source, event.type, 'handled');
  }

  /** A delivery purges when the last purge (the timer's or a delivery's) is purgeEveryMs old. */
  private async purgeResolvedNowAndThen(): Promise<void> {
    if (Date.now() - this.lastPurge < this.purgeEveryMs) return;
    await this.purgeResolved();
  }

  /** One purge, unless one is under way. A failed purge is tried again at the next one; it never fails a delivery, whose event is consumed. */
  private purgeResolved(): Promise<void> {
    this.lastPurge = Date.now();
    this.purging ??= (async () => {
      try {
        const purged = await this.deadLetterStore.purgeResolved(new Date(Date.now() - RESOLVED_RETENTION_MS), PURGE_BATCH);
        if (purged) this.logger.info({ purged }, 'dead letters resolved more than 30 days ago purged');
      } catch (error) {
        this.logger.warn({ err: error }, 'purging resolved dead letters failed; the next purge tries again');
      } finally {
        this.purging = undefined;
      }
    })();
    return this.purging;
  }

  /** Parked events, replayed or not, newest first. */
  async deadLetters(limit = 100): Promise<DeadLetter[]> {
    return this.deadLetterStore.list('all', limit);
  }

  /** Hands a parked event to its handler again (see DeadLetters.replay). */
  async replay(id: string): Promise<HandleOutcome | undefined> {
    const replayed = await this.deadLetterStore.replay(id);
    if (replayed?.outcome === 'failed') throw new Error(replayed.error);
    return replayed?.outcome;
  }

  /**
   * `handling`, or a HandlerTimeout once it took handlerTimeoutMs. The call itself cannot be
   * stopped and may still finish later, beside the redelivery: handlers are idempotent (a
   * crash between handling and recording hands an event over again too).
   */
  private async within(handling: Promise<void>, type: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new HandlerTimeout(type, this.handlerTimeoutMs)), this.handlerTimeoutMs);
    });
    try {
      await Promise.race([handling, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async lastSequence(client: SqlClient, event: ReceivedEvent): Promise<number> {
    const [row] = await client.$queryRawUnsafe<{ last_sequence: number }[]>(
      `SELECT last_sequence FROM processed_events WHERE source = $1 AND aggregate_type = $2 AND aggregate_id = $3`,
      event.source,
      event.aggregateType,
      event.aggregateId,
    );
    return row ? Number(row.last_sequence) : 0;
  }

  private markHandled(event: ReceivedEvent): Promise<void> {
    return markHandled(this.db, event);
  }

  private park(event: Record<string, unknown>, error: string, attempts: number): Promise<void> {
    return this.deadLetterStore.park(event, error, attempts);
  }

  private count(source: string, type: string, outcome: HandleOutcome): HandleOutcome {
    this.outcomes.inc({ source, type, outcome });
    return outcome;
  }
}

/** Records `event` as handled: its aggregate's last handled sequence moves up to it (never down). */
async function markHandled(db: SqlClient, event: ReceivedEvent): Promise<void> {
  await db.$executeRawUnsafe(
    `INSERT INTO processed_events (source, aggregate_type, aggregate_id, last_sequence, last_event_id) VALUES ($1, $2, $3, $4, $5::uuid)
     ON CONFLICT (source, aggregate_type, aggregate_id) DO UPDATE SET last_sequence = GREATEST(processed_events.last_sequence, EXCLUDED.last_sequence),
       last_event_id = CASE WHEN EXCLUDED.last_sequence > processed_events.last_sequence THEN EXCLUDED.last_event_id ELSE processed_events.last_event_id END, handled_at = now()`,
    event.source,
    event.aggregateType,
    event.aggregateId,
    event.sequence,
    event.id,
  );
}

/** The dead letters of a consumer with `handlers` on `db`: what its operators' routes list and replay. */
export function deadLettersOf(db: SqlClient, handlers: EventHandlers, logger: Logger): DeadLetters {
  return new DeadLetters(db, handlers, logger, (event) => markHandled(db, event));
}
