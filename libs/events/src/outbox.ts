// The outbox: events written into the service's own database by the transaction of the change
// they describe (the outbox_events and event_sequences tables every service's schema has). It
// talks plain SQL through the two raw-query methods every Prisma client and transaction client
// has, so one implementation serves every service whatever its generated client.
import { newId } from '@platform/ids';
import { eventCatalog, type DomainEvent } from './catalog';
import type { RecordedEvent } from './envelope';
import { noteEventRecorded } from './outbox-signals';

/** The raw-SQL part of a Prisma client or transaction client. */
export interface SqlClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
}

/** A Prisma client: raw SQL and interactive transactions. */
export interface SqlDatabase extends SqlClient {
  $transaction<R>(work: (tx: SqlClient) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
}

/** Where the service's database lives: a server others connect to, or embedded in this process. */
export type DatabaseKind = 'postgresql' | 'pglite';

/**
 * Whether other processes may write the database. An embedded one is this process's alone, so
 * every outbox write is announced in-process and nobody needs to look unwoken; unknown counts as
 * shared, the safe guess. The relay's polling and the event log's waiting reads both follow it.
 */
export const isSharedDatabase = (kind: DatabaseKind | undefined): boolean => kind !== 'pglite';

export class InvalidEvent extends Error {}

/**
 * Records `event` in the outbox through `tx`, the transaction writing the change: the event is
 * there exactly when the change committed. The aggregate's next sequence number comes from its
 * event_sequences row, whose lock makes concurrent writers of one aggregate take turns.
 * Throws InvalidEvent (a programming error) when the data does not match the type's schema.
 * Written through `unitOfWork`, the commit wakes the relay at once; otherwise its next poll finds it.
 */
export async function recordEvent(tx: SqlClient, event: DomainEvent): Promise<void> {
  const definition = eventCatalog[event.type];
  const checked = definition.data.safeParse(event.data);
  if (!checked.success) throw new InvalidEvent(`${event.type} for ${event.aggregateId}: ${checked.error.message}`);
  await tx.$executeRawUnsafe(
    `WITH next AS (
       INSERT INTO event_sequences (aggregate_type, aggregate_id, last_sequence) VALUES ($1, $2, 1)
       ON CONFLICT (aggregate_type, aggregate_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
       RETURNING last_sequence)
     INSERT INTO outbox_events (id, type, aggregate_type, aggregate_id, sequence, data, occurred_at)
     SELECT $3::uuid, $4, $1, $2, last_sequence, $5::jsonb, COALESCE($6::timestamptz, now()) FROM next`,
    definition.aggregate,
    event.aggregateId,
    newId(),
    event.type,
    JSON.stringify(checked.data),
    // now() is the transaction's start: earlier than a time the use case read later for the change itself.
    event.occurredAt?.toISOString() ?? null,
  );
  noteEventRecorded(tx);
}

interface OutboxRow {
  position: string;
  id: string;
  type: string;
  aggregate_type: string;
  aggregate_id: string;
  sequence: number;
  data: unknown;
  occurred_at: Date | string;
}

/** An outbox row as the relay and the event log read it. */
export interface StoredEvent extends RecordedEvent {
  /** Insertion order (unpublished rows) or place in the published log (the log's reads). */
  position: string;
}

function storedEventOf(row: OutboxRow): StoredEvent {
  return {
    position: row.position,
    id: row.id,
    type: row.type,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    sequence: Number(row.sequence),
    data: typeof row.data === 'string' ? JSON.parse(row.data) : row.data,
    occurredAt: new Date(row.occurred_at),
  };
}

const COLUMNS = `id::text AS id, type, aggregate_type, aggregate_id, sequence, data, occurred_at`;

/** The oldest unpublished events, in the order they were written. */
export async function unpublishedEvents(tx: SqlClient, limit: number): Promise<StoredEvent[]> {
  const rows = await tx.$queryRawUnsafe<OutboxRow[]>(`SELECT position::text AS position, ${COLUMNS} FROM outbox_events WHERE published_at IS NULL ORDER BY outbox_events.position LIMIT $1`, limit);
  return rows.map(storedEventOf);
}

/**
 * Marks events published, giving them the next places in the published log in the order given.
 * The caller holds the relay lock, so places only grow; the newest published row is never purged,
 * so the log's end survives purges.
 */
export async function markPublished(tx: SqlClient, positions: readonly string[]): Promise<void> {
  await tx.$executeRawUnsafe(
    `UPDATE outbox_events o SET published_at = now(), log_position = base.last + t.n
     FROM unnest(string_to_array($1, ',')::bigint[]) WITH ORDINALITY AS t(position, n),
          (SELECT COALESCE(MAX(log_position), 0) AS last FROM outbox_events) AS base
     WHERE o.position = t.position`,
    positions.join(','),
  );
}

/** Published events after `after` in the log, in log order (the embedded transport's read). */
export async function publishedEventsAfter(client: SqlClient, after: string, limit: number): Promise<StoredEvent[]> {
  const rows = await client.$queryRawUnsafe<OutboxRow[]>(
    `SELECT log_position::text AS position, ${COLUMNS} FROM outbox_events WHERE log_position > $1::bigint ORDER BY log_position LIMIT $2`,
    after,
    limit,
  );
  return rows.map(storedEventOf);
}

/** How many events wait to be published, and since when the oldest has (the backlog metrics). */
export async function outboxBacklog(client: SqlClient): Promise<{ count: number; oldest: Date | null }> {
  const [row] = await client.$queryRawUnsafe<{ count: number | bigint; oldest: Date | string | null }[]>(
    `SELECT count(*)::int AS count, min(occurred_at) AS oldest FROM outbox_events WHERE published_at IS NULL`,
  );
  return { count: Number(row.count), oldest: row.oldest === null ? null : new Date(row.oldest) };
}

/** Deletes published events older than `before`, at most `limit`, keeping the newest (the log's end). */
export async function purgePublished(client: SqlClient, before: Date, limit: number): Promise<number> {
  return client.$executeRawUnsafe(
    `DELETE FROM outbox_events WHERE position IN (
       SELECT position FROM outbox_events
       WHERE published_at < $1::timestamptz AND log_position < (SELECT MAX(log_position) FROM outbox_events)
       ORDER BY position LIMIT $2)`,
    before.toISOString(),
    limit,
  );
}
