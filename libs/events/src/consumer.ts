// The consuming side, the same over every transport: each received event is checked (envelope
// and data schema), passed over when already handled or older than what was handled for its
// aggregate (processed_events keeps the last sequence per aggregate), handled, then recorded.
// Handlers are idempotent themselves, since a crash between handling and recording hands the
// event over again. An event a handler keeps failing on is parked in dead_letter_events after
// `maxAttempts`, so it never blocks the events behind it for longer than its retries.
import type { Logger } from '@platform/service-kit';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { EventType } from './catalog';
import { fromCloudEventJson, MalformedEvent, type ReceivedEvent } from './envelope';
import type { SqlClient, SqlDatabase } from './outbox';
import type { Consumption, Delivery, EventTransport } from './transport';

export type EventHandlers = Partial<Record<EventType, (event: ReceivedEvent) => Promise<void>>>;

export interface ConsumerSettings {
  /** The consuming service's name. */
  consumer: string;
  /** The producing services whose events it reads. */
  sources: readonly string[];
  handlers: EventHandlers;
  /** Deliveries of one event before it is parked as dead. */
  maxAttempts?: number;
}

export type HandleOutcome = 'handled' | 'duplicate' | 'ignored' | 'parked';

export class EventConsumer {
  private consumption: Consumption | undefined;
  private readonly maxAttempts: number;
  private readonly outcomes: Counter;
  private readonly redeliveries: Counter;
  private readonly lag: Histogram;

  constructor(
    private readonly db: SqlDatabase,
    private readonly transport: EventTransport,
    private readonly logger: Logger,
    private readonly settings: ConsumerSettings,
    registry?: Registry,
  ) {
    this.maxAttempts = settings.maxAttempts ?? 5;
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
  }

  async start(): Promise<void> {
    this.consumption = await this.transport.consume({ consumer: this.settings.consumer, sources: this.settings.sources, types: Object.keys(this.settings.handlers) }, (delivery) =>
      this.deliver(delivery).then(() => undefined),
    );
  }

  async stop(): Promise<void> {
    await this.consumption?.stop();
  }

  /** One delivery: resolves when the event is consumed (handled, passed over or parked); rejects to have it delivered again. */
  async deliver(delivery: Delivery): Promise<HandleOutcome> {
    const source = String(delivery.event.source ?? '').replace(/^\//, '');
    if (delivery.attempt > 1) this.redeliveries.inc({ source });
    let event: ReceivedEvent;
    try {
      event = fromCloudEventJson(delivery.event);
    } catch (error) {
      if (!(error instanceof MalformedEvent)) throw error;
      await this.park(delivery.event, error.message, delivery.attempt);
      return this.count(source, String(delivery.event.type), 'parked');
    }
    const handler = this.settings.handlers[event.type];
    if (!handler) return this.count(source, event.type, 'ignored');
    if ((await this.lastSequence(this.db, event)) >= event.sequence) return this.count(source, event.type, 'duplicate');
    try {
      await handler(event);
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

  /** Parked events, newest first. */
  async deadLetters(limit = 100): Promise<DeadLetter[]> {
    const rows = await this.db.$queryRawUnsafe<DeadLetterRow[]>(
      `SELECT id::text AS id, source, type, event, error, attempts, parked_at, replayed_at FROM dead_letter_events ORDER BY parked_at DESC LIMIT $1`,
      limit,
    );
    return rows.map((row) => ({ id: row.id, source: row.source, type: row.type, event: row.event, error: row.error, attempts: row.attempts, parkedAt: new Date(row.parked_at), replayedAt: row.replayed_at ? new Date(row.replayed_at) : null }));
  }

  /**
   * Hands a parked event to its handler again (an operator fixed the cause). It runs whatever
   * the aggregate's events since: the operator chose to. Undefined when no such event is parked.
   */
  async replay(id: string): Promise<HandleOutcome | undefined> {
    const [row] = await this.db.$queryRawUnsafe<DeadLetterRow[]>(`SELECT id::text AS id, event FROM dead_letter_events WHERE id = $1::uuid AND replayed_at IS NULL`, id);
    if (!row) return undefined;
    const event = fromCloudEventJson(row.event as Record<string, unknown>);
    const handler = this.settings.handlers[event.type];
    if (handler) await handler(event);
    await this.db.$executeRawUnsafe(`UPDATE dead_letter_events SET replayed_at = now() WHERE id = $1::uuid`, id);
    if (handler) await this.markHandled(event);
    return handler ? 'handled' : 'ignored';
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

  private async markHandled(event: ReceivedEvent): Promise<void> {
    await this.db.$executeRawUnsafe(
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

  private async park(event: Record<string, unknown>, error: string, attempts: number): Promise<void> {
    const id = typeof event.id === 'string' && /^[0-9a-f-]{36}$/i.test(event.id) ? event.id : null;
    this.logger.error({ eventId: event.id, type: event.type, error, attempts }, 'event parked as dead: an operator can replay it');
    await this.db.$executeRawUnsafe(
      `INSERT INTO dead_letter_events (id, source, type, event, error, attempts) VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4::jsonb, $5, $6)
       ON CONFLICT (id) DO UPDATE SET error = EXCLUDED.error, attempts = EXCLUDED.attempts, parked_at = now(), replayed_at = NULL`,
      id,
      String(event.source ?? '').slice(0, 100),
      String(event.type ?? '').slice(0, 100),
      JSON.stringify(event),
      error.slice(0, 2000),
      attempts,
    );
  }

  private count(source: string, type: string, outcome: HandleOutcome): HandleOutcome {
    this.outcomes.inc({ source, type, outcome });
    return outcome;
  }
}

interface DeadLetterRow {
  id: string;
  source: string;
  type: string;
  event: unknown;
  error: string;
  attempts: number;
  parked_at: Date | string;
  replayed_at: Date | string | null;
}

export interface DeadLetter {
  id: string;
  source: string;
  type: string;
  event: unknown;
  error: string;
  attempts: number;
  parkedAt: Date;
  replayedAt: Date | null;
}
