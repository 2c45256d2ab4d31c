// The relay: publishes committed outbox rows to the transport, oldest first, and marks them
// published only after the transport acknowledged them. A crash between the two publishes
// them again (at least once); consumers drop what they have already handled. One relay per
// service database works at a time (an advisory lock), so the published log's order is the
// order of the marks, whatever the number of replicas. It runs when a unit of work of this
// process committed events (outbox-signals) or SQL announced its own rows (NOTIFY), soon again when
// another replica held the lock, and every `pollMs` besides (the commits of other replicas). On an
// embedded database no other process can write, so every row is announced and the poll is only a
// slow safety net.
import type { Logger } from '@platform/service-kit';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { toCloudEvent } from './envelope';
import { type DatabaseKind, isSharedDatabase, markPublished, outboxBacklog, purgePublished, type SqlDatabase, unpublishedEvents } from './outbox';
import { onOutbox, signalOutbox } from './outbox-signals';
import type { EventTransport } from './transport';

/** pg_advisory_xact_lock key of the relay ("outbox" in ASCII): one relay per database at a time. */
const RELAY_LOCK = 0x6f7574626f78;
const DAY_MS = 86_400_000;
/**
 * How soon to try again when another replica's relay held the lock (its pass may have read before
 * this replica's commit), doubling while it keeps holding it, up to `pollMs`.
 */
const LOCK_RETRY_MS = 20;
/**
 * How often a relay on a database no other process writes (embedded PGlite) looks unwoken: every
 * row there is announced, so this only bounds the wait of one a bug left unannounced (a pass that
 * failed, whose rows no wake announces again, is tried again at `pollMs`). Polling at
 * `pollMs` cost the idle embedded stack about 70 ms of CPU a second (docs/benchmarks.md).
 */
export const PRIVATE_DATABASE_POLL_MS = 60_000;
/** What publishBatch returns when another relay holds the lock. */
const LOCKED_ELSEWHERE = -1;

export interface RelaySettings {
  /** The producing service's name; the CloudEvents `source` is `/<service>`. */
  service: string;
  batchSize?: number;
  /** How often to look without being woken: an event no wake announced waits this long at most. */
  pollMs?: number;
  /** False: no other process writes the database (embedded), and the relay looks unwoken only every PRIVATE_DATABASE_POLL_MS. */
  sharedDatabase?: boolean;
  /** Published events kept for readers of the embedded log (and replays). */
  retentionMs?: number;
  /** How long a batch may take to be acknowledged before the relay gives up and tries again. */
  publishTimeoutMs?: number;
}

export class OutboxRelay {
  private readonly batchSize: number;
  private readonly pollMs: number;
  /** How soon a pass that failed is tried again: `pollMs` as configured, even on an embedded database. */
  private readonly retryMs: number;
  /** The last pass failed (transport or database): what it was woken for is still unpublished, and no wake will come again for it. */
  private failed = false;
  private readonly retentionMs: number;
  private readonly publishTimeoutMs: number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  /** Passes in a row that found the lock held elsewhere. */
  private lockMisses = 0;
  private stopped = true;
  private lastPurge = 0;
  private readonly published: Counter;
  private readonly failures: Counter;
  private readonly lag: Histogram;

  constructor(
    private readonly db: SqlDatabase,
    private readonly transport: EventTransport,
    private readonly logger: Logger,
    private readonly settings: RelaySettings,
    registry?: Registry,
  ) {
    this.batchSize = settings.batchSize ?? 200;
    this.retryMs = settings.pollMs ?? 1_000;
    this.pollMs = settings.sharedDatabase === false ? Math.max(this.retryMs, PRIVATE_DATABASE_POLL_MS) : this.retryMs;
    this.retentionMs = settings.retentionMs ?? 30 * DAY_MS;
    this.publishTimeoutMs = settings.publishTimeoutMs ?? 10_000;
    const registers = registry ? [registry] : [];
    this.published = new Counter({ name: 'outbox_events_published_total', help: 'Outbox events the transport acknowledged', labelNames: ['type'], registers });
    this.failures = new Counter({ name: 'outbox_relay_errors_total', help: 'Relay batches that failed (transport or database); they are tried again', registers });
    this.lag = new Histogram({
      name: 'outbox_relay_lag_seconds',
      help: 'From the commit of an event to its acknowledgement by the transport',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    if (registry) {
      const backlog = () => outboxBacklog(this.db);
      new Gauge({
        name: 'outbox_backlog_events',
        help: 'Events committed but not yet published',
        registers,
        async collect() {
          this.set((await backlog()).count);
        },
      });
      new Gauge({
        name: 'outbox_oldest_unpublished_age_seconds',
        help: 'Age of the oldest event not yet published (0 when none waits)',
        registers,
        async collect() {
          const { oldest } = await backlog();
          this.set(oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0);
        },
      });
    }
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Runs a pass now (a commit recorded events), or right after the one under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.wake();
      } else {
        const next = this.failed ? this.retryMs : this.pollMs;
        this.timer = setTimeout(() => this.wake(), this.lockMisses ? Math.min(LOCK_RETRY_MS * 2 ** (this.lockMisses - 1), next) : next);
        this.timer.unref();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Publishes batches until the outbox is empty or a batch fails; then purges old published rows now and then. */
  private async pass(): Promise<void> {
    this.failed = false;
    try {
      let published: number;
      do published = await this.publishBatch();
      while (!this.stopped && published === this.batchSize);
      this.lockMisses = published === LOCKED_ELSEWHERE ? this.lockMisses + 1 : 0;
      if (Date.now() - this.lastPurge > 60_000) {
        this.lastPurge = Date.now();
        await purgePublished(this.db, new Date(Date.now() - this.retentionMs), 10_000);
      }
    } catch (error) {
      this.failed = true;
      this.failures.inc();
      this.logger.warn({ err: error }, 'outbox relay pass failed; it tries again');
    }
  }

  /**
   * One batch: read, publish, mark, in one transaction under the relay lock. Returns how many were
   * published (-1: another replica's relay holds the lock); once committed, the event log's
   * long-polling readers are woken.
   */
  async publishBatch(): Promise<number> {
    const published = await this.db.$transaction(
      async (tx) => {
        const [{ locked }] = await tx.$queryRawUnsafe<{ locked: boolean }[]>('SELECT pg_try_advisory_xact_lock($1::bigint) AS locked', RELAY_LOCK);
        if (!locked) return LOCKED_ELSEWHERE;
        const events = await unpublishedEvents(tx, this.batchSize);
        if (!events.length) return 0;
        await this.transport.publish(events.map((event) => toCloudEvent(`/${this.settings.service}`, event)));
        await markPublished(
          tx,
          events.map((event) => event.position),
        );
        const now = Date.now();
        for (const event of events) {
          this.published.inc({ type: event.type });
          this.lag.observe((now - event.occurredAt.getTime()) / 1000);
        }
        return events.length;
      },
      { maxWait: this.publishTimeoutMs, timeout: this.publishTimeoutMs + 5_000 },
    );
    if (published > 0) signalOutbox(this.db, 'published');
    return published;
  }
}

/**
 * The channel that SQL writing the outbox by itself notifies (inventory's stock.changed trigger):
 * rare writes, so a NOTIFY costs nothing there, and the relay wakes on it as on a unit of work.
 */
export const OUTBOX_CHANNEL = 'outbox_events';

/** What startOutboxRelay needs of a service's open database (`@platform/db`'s Database). */
export interface OutboxDatabase {
  prisma: SqlDatabase;
  /** 'pglite': embedded, written by this process only (@platform/db's Database). */
  kind?: DatabaseKind;
  listen?(channel: string, handlers: { onNotification(payload: string): void; onReconnect?(): void }): Promise<() => Promise<void>>;
}

/**
 * Starts the service's relay, woken by every unit of work of this process that committed events
 * (and by NOTIFYs on OUTBOX_CHANNEL when the database can listen), polling besides: every `pollMs` on
 * a shared database, rarely on an embedded one. Returns the relay and the function that stops it.
 */
export async function startOutboxRelay(
  database: OutboxDatabase,
  transport: EventTransport,
  logger: Logger,
  settings: RelaySettings,
  registry?: Registry,
): Promise<{ relay: OutboxRelay; stop: () => Promise<void> }> {
  const relay = new OutboxRelay(database.prisma, transport, logger, { sharedDatabase: isSharedDatabase(database.kind), ...settings }, registry);
  const stopWaking = onOutbox(database.prisma, 'committed', () => relay.wake());
  const unlisten = (await database.listen?.(OUTBOX_CHANNEL, { onNotification: () => relay.wake(), onReconnect: () => relay.wake() })) ?? (async () => undefined);
  relay.start();
  return {
    relay,
    stop: async () => {
      stopWaking();
      await unlisten();
      await relay.stop();
    },
  };
}
