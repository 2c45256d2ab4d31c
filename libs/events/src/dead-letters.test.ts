// Dead letters as operators and the events behind them meet them: a poisoned event is retried a
// bounded number of times, parked, and never holds up the events behind it (its own aggregate's
// included); operators list and replay it over HTTP with a service token, and nobody else can.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { issueAccessToken, serviceTokenSource, TokenVerifier } from '@platform/auth';
import { createTestPGlite, EMBEDDED_EXTENSIONS } from '@platform/db/testing';
import { errorHandler } from '@platform/errors';
import { newId } from '@platform/ids';
import { createLogger, type Listening, listen } from '@platform/service-kit';
import { apiClient } from '@platform/test-kit';
import express from 'express';
import { domainEvent } from './catalog';
import { EventConsumer } from './consumer';
import { EmbeddedTransport, sqlCursorStore } from './embedded-transport';
import type { ReceivedEvent } from './envelope';
import type { EventTransport } from './transport';
import { recordEvent, type SqlClient, type SqlDatabase } from './outbox';
import { eventRoutes } from './internal-routes';
import { unitOfWork } from './outbox-signals';
import { startOutboxRelay } from './relay';

const migrationsDir = path.join(__dirname, '../../../apps/orders-service/prisma/migrations');
const SECRET = 'dead-letters-test-secret-dead-letters-0123';
const logger = createLogger('dead-letters-test', 'silent');

function sqlClientOf(db: PGlite | Transaction): SqlClient {
  return {
    $queryRawUnsafe: async <T>(sql: string, ...values: unknown[]) => (await db.query(sql, values)).rows as T,
    $executeRawUnsafe: async (sql: string, ...values: unknown[]) => (await db.query(sql, values)).affectedRows ?? 0,
  };
}

let pglite: PGlite;
let db: SqlDatabase;
let server: Listening;
/** Aggregates whose user.deleted the handler refuses (the poison), and what it handled, in order. */
const poisoned = new Set<string>();
const handled: string[] = [];

const handlers = {
  'user.updated': async (event: ReceivedEvent) => void handled.push(`${event.aggregateId}:updated:${event.sequence}`),
  'user.deleted': async (event: ReceivedEvent) => {
    if (poisoned.has(event.aggregateId)) throw new Error(`orders of ${event.aggregateId} cannot be canceled now`);
    handled.push(`${event.aggregateId}:deleted:${event.sequence}`);
  },
};

const user = (id: string, version: number) => ({ id, role: 'customer' as const, name: 'Kim', email: 'kim@example.com', version, createdAt: '2026-11-24T00:00:00.000Z' });

async function until(condition: () => boolean | Promise<boolean>, withinMs = 90_000): Promise<void> {
  for (const giveUpAt = Date.now() + withinMs; !(await condition()); await new Promise((resolve) => setTimeout(resolve, 25))) {
    if (Date.now() > giveUpAt) throw new Error(`not true within ${withinMs} ms`);
  }
}

const api = apiClient(() => server.url);
const call = (method: 'GET' | 'POST', url: string, token?: string) => api(method, url, { token });

beforeAll(async () => {
  pglite = await createTestPGlite({ extensions: EMBEDDED_EXTENSIONS });
  for (const dir of readdirSync(migrationsDir).filter((name) => /^\d/.test(name)).sort()) await pglite.exec(readFileSync(path.join(migrationsDir, dir, 'migration.sql'), 'utf8'));
  db = { ...sqlClientOf(pglite), $transaction: (work) => pglite.transaction((tx) => work(sqlClientOf(tx))) };
  // One process plays both sides: the producer's event log and the consumer's dead-letter door.
  const internal = new TokenVerifier([SECRET], { audience: 'internal' });
  const app = express();
  // Both doors as a service mounts them (a replay runs the same handlers as the consumer's).
  app.use(eventRoutes({ db, service: 'users-service', internalVerifier: internal, consumer: { handlers, logger } }));
  app.use(errorHandler);
  server = await listen(app, 0, '127.0.0.1');
}, 180_000); // generous: the embedded PostgreSQL and its migrations start slowly on a loaded machine

afterAll(async () => {
  await server?.close();
  await pglite?.close();
}, 60_000);

it('parks a poisoned event after 3 attempts while every event behind it, its own aggregate\'s included, is handled; operators list it and replay it once fixed', async () => {
  const transport = new EmbeddedTransport({ producers: { 'users-service': server.url }, serviceToken: serviceTokenSource(SECRET, 'orders-service'), cursors: sqlCursorStore(db), logger, waitMs: 1_000 });
  const running = new EventConsumer(db, transport, logger, { consumer: 'orders-service', sources: ['users-service'], handlers, maxAttempts: 3 });
  const relay = await startOutboxRelay({ prisma: db }, transport, logger, { service: 'users-service', pollMs: 50 });
  await running.start();
  const sick = newId();
  const well = newId();
  poisoned.add(sick);
  try {
    // The sick user's deletion is poison; after it come its own next event and another user's.
    await db.$transaction((tx) => recordEvent(tx, domainEvent('user.deleted', sick, { id: sick })));
    await db.$transaction((tx) => recordEvent(tx, domainEvent('user.updated', sick, user(sick, 2))));
    await db.$transaction((tx) => recordEvent(tx, domainEvent('user.deleted', well, { id: well })));
    await until(() => handled.includes(`${well}:deleted:1`));
    // Not blocked: the aggregate's later event went on (documented: a replay runs after it).
    expect(handled).toEqual([`${sick}:updated:2`, `${well}:deleted:1`]);
  } finally {
    await running.stop();
    await relay.stop();
  }

  const service = await serviceTokenSource(SECRET, 'events-cli')();
  const listed = await call('GET', '/internal/dead-letters', service);
  expect(listed.status).toBe(200);
  expect(listed.body.items).toEqual([
    expect.objectContaining({ source: '/users-service', type: 'user.deleted', attempts: 3, error: `orders of ${sick} cannot be canceled now`, replayedAt: null, event: expect.objectContaining({ subject: `user/${sick}`, aggregatesequence: 1 }) }),
  ]);
  const { id } = listed.body.items[0];

  // Still failing: the event stays parked, with one more attempt, and the operator is told why.
  const refused = await call('POST', `/internal/dead-letters/${id}/replay`, service);
  expect(refused.status).toBe(409);
  expect(refused.body).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('cannot be canceled now') });
  expect((await call('GET', '/internal/dead-letters', service)).body.items).toEqual([expect.objectContaining({ id, attempts: 4, replayedAt: null })]);

  poisoned.delete(sick);
  const replayed = await call('POST', `/internal/dead-letters/${id}/replay`, service);
  expect(replayed.status).toBe(200);
  expect(replayed.body).toMatchObject({ outcome: 'handled', deadLetter: { id, replayedAt: expect.any(String) } });
  expect(handled.at(-1)).toBe(`${sick}:deleted:1`);
  // Replayed once: again is a 404, and it has left the waiting list for the replayed one.
  expect((await call('POST', `/internal/dead-letters/${id}/replay`, service)).status).toBe(404);
  expect((await call('GET', '/internal/dead-letters', service)).body.items).toEqual([]);
  expect((await call('GET', '/internal/dead-letters?state=replayed', service)).body.items).toEqual([expect.objectContaining({ id })]);
  // A redelivery of the replayed event now is a duplicate: handled once.
  const [row] = await db.$queryRawUnsafe<{ last_sequence: number }[]>(`SELECT last_sequence FROM processed_events WHERE aggregate_id = $1`, sick);
  expect(Number(row.last_sequence)).toBe(2);
}, 120_000);

it('answers only service tokens, and refuses bad parameters and unknown ids in the error format', async () => {
  const service = await serviceTokenSource(SECRET, 'events-cli')();
  const { accessToken: customer } = await issueAccessToken(SECRET, { userId: newId(), role: 'customer' }, 600);
  const { accessToken: admin } = await issueAccessToken(SECRET, { userId: newId(), role: 'admin' }, 600);
  expect((await call('GET', '/internal/dead-letters')).status).toBe(401);
  expect((await call('GET', '/internal/dead-letters', customer)).status).toBe(401);
  expect((await call('GET', '/internal/dead-letters', admin)).status).toBe(401);
  expect((await call('POST', `/internal/dead-letters/${newId()}/replay`, admin)).status).toBe(401);

  const badState = await call('GET', '/internal/dead-letters?state=everything&limit=0', service);
  expect(badState.status).toBe(422);
  expect(badState.body.errors.map((error: { field: string }) => error.field).sort()).toEqual(['limit', 'state']);
  expect((await call('GET', '/internal/dead-letters?sort=parkedAt', service)).body.errors[0]).toMatchObject({ field: 'sort', code: 'UNKNOWN_PARAMETER' });
  expect((await call('POST', `/internal/dead-letters/${newId()}/replay`, service)).status).toBe(404);
  expect((await call('POST', '/internal/dead-letters/not-an-id/replay', service)).body).toMatchObject({ code: 'NOT_FOUND' });
}, 120_000);

it('the event log waits for new events (long poll) and answers as soon as the relay publishes one', async () => {
  const service = await serviceTokenSource(SECRET, 'orders-service')();
  const [{ last }] = await db.$queryRawUnsafe<{ last: string }[]>(`SELECT COALESCE(MAX(log_position), 0)::text AS last FROM outbox_events`);
  const relay = await startOutboxRelay({ prisma: db }, new EmbeddedTransport({ producers: {}, serviceToken: async () => service, logger }), logger, { service: 'users-service', pollMs: 60_000 });
  try {
    const id = newId();
    // Asked before the event exists; the answer carries it, so the read waited for it. The relay
    // polls once a minute: only the unit of work's wake can have published it in time.
    const read = call('GET', `/internal/events?after=${last}&wait=5000`, service);
    await new Promise((resolve) => setTimeout(resolve, 100));
    await unitOfWork(db, (tx) => recordEvent(tx, domainEvent('user.deleted', id, { id })));
    const answer = await read;
    expect(answer.status).toBe(200);
    expect(answer.body.events.map((entry: { event: { subject: string } }) => entry.event.subject)).toEqual([`user/${id}`]);
  } finally {
    await relay.stop();
  }
  const tooLong = await call('GET', '/internal/events?wait=60000', service);
  expect(tooLong.status).toBe(422);
  expect(tooLong.body.errors[0]).toMatchObject({ field: 'wait', code: 'OUT_OF_RANGE' });
}, 120_000);

it('a service that consumes no events serves its event log and no dead-letter door', async () => {
  const app = express();
  app.use(eventRoutes({ db, service: 'inventory-service', internalVerifier: new TokenVerifier([SECRET], { audience: 'internal' }) }));
  app.use(errorHandler);
  const producer = await listen(app, 0, '127.0.0.1');
  try {
    const service = await serviceTokenSource(SECRET, 'orders-service')();
    const producerCall = apiClient(() => producer.url);
    expect((await producerCall('GET', '/internal/events?limit=1')).status).toBe(401);
    expect((await producerCall('GET', '/internal/events?limit=1', { token: service })).status).toBe(200);
    expect((await producerCall('GET', '/internal/dead-letters', { token: service })).status).toBe(404);
  } finally {
    await producer.close();
  }
});

it('purges letters resolved (replayed or ignored) more than 30 days ago, a bounded batch at a time, as deliveries go on; parked ones stay whatever their age', async () => {
  const transport = new EmbeddedTransport({ producers: { 'users-service': server.url }, serviceToken: serviceTokenSource(SECRET, 'orders-service'), cursors: sqlCursorStore(db), logger, waitMs: 1_000 });
  const consumer = new EventConsumer(db, transport, logger, { consumer: 'orders-service', sources: ['users-service'], handlers });
  const DAY_MS = 24 * 60 * 60 * 1000;
  // id → days since it was resolved (null: still parked); every one was parked 90 days ago.
  const letters = new Map<string, number | null>([
    [newId(), null],
    [newId(), 40],
    [newId(), 31],
    [newId(), 1],
  ]);
  for (const [id, resolvedDaysAgo] of letters) {
    await consumer.deadLetterStore.park({ id, source: '/users-service', type: 'user.deleted' }, 'poisoned', 5);
    await db.$executeRawUnsafe(
      `UPDATE dead_letter_events SET parked_at = $2::timestamptz, replayed_at = $3::timestamptz WHERE id = $1::uuid`,
      id,
      new Date(Date.now() - 90 * DAY_MS).toISOString(),
      resolvedDaysAgo === null ? null : new Date(Date.now() - resolvedDaysAgo * DAY_MS).toISOString(),
    );
  }
  const left = async () => (await db.$queryRawUnsafe<{ id: string }[]>(`SELECT id::text AS id FROM dead_letter_events WHERE id = ANY($1::uuid[])`, [...letters.keys()])).map((row) => row.id).sort();
  const [waiting, , resolved31, resolved1] = [...letters.keys()]; // the second, resolved 40 days ago, goes first

  // One batch deletes no more than its limit, the longest resolved first.
  expect(await consumer.deadLetterStore.purgeResolved(new Date(Date.now() - 30 * DAY_MS), 1)).toBe(1);
  expect(await left()).toEqual([waiting, resolved31, resolved1].sort());
  // The consumer purges by itself as it consumes: any delivery, here one of a type it passes over.
  expect(await consumer.deliver({ event: { id: newId(), source: '/users-service', type: 'user.renamed' }, attempt: 1 })).toBe('ignored');
  expect(await left()).toEqual([waiting, resolved1].sort());
});

it('purges resolved letters on its own timer from start() to stop(), with no delivery at all', async () => {
  // A broker that delivers nothing: any purge is the timer's.
  const quiet: EventTransport = { kind: 'embedded', publish: async () => undefined, consume: async () => ({ stop: async () => undefined }), close: async () => undefined };
  const consumer = new EventConsumer(db, quiet, logger, { consumer: 'orders-service', sources: ['users-service'], handlers, purgeEveryMs: 20 });
  const resolvedLongAgo = async () => {
    const id = newId();
    await consumer.deadLetterStore.park({ id, source: '/users-service', type: 'user.deleted' }, 'poisoned', 5);
    await db.$executeRawUnsafe(`UPDATE dead_letter_events SET parked_at = now() - interval '90 days', replayed_at = now() - interval '40 days' WHERE id = $1::uuid`, id);
    return id;
  };
  const stored = async (id: string) => (await db.$queryRawUnsafe<unknown[]>(`SELECT 1 FROM dead_letter_events WHERE id = $1::uuid`, id)).length === 1;
  const purges = jest.spyOn(consumer.deadLetterStore, 'purgeResolved');

  const first = await resolvedLongAgo();
  await consumer.start();
  await until(async () => !(await stored(first)), 10_000);

  await consumer.stop();
  const purgesAtStop = purges.mock.calls.length;
  const second = await resolvedLongAgo();
  // Many periods later the stopped timer has purged nothing more.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect([purges.mock.calls.length, await stored(second)]).toEqual([purgesAtStop, true]);
  await consumer.deadLetterStore.purgeResolved(new Date(), 10);
});


it('stops a consumption that start() was still setting up when stop() came, and starts no purge timer after it', async () => {
  // A broker slow to set the consumption up: a shutdown arrives while the process still starts.
  let setUp!: () => void;
  const consumptionStops = jest.fn(async () => undefined);
  const slow: EventTransport = {
    kind: 'embedded',
    publish: async () => undefined,
    consume: () => new Promise((resolve) => (setUp = () => resolve({ stop: consumptionStops }))),
    close: async () => undefined,
  };
  const consumer = new EventConsumer(db, slow, logger, { consumer: 'orders-service', sources: ['users-service'], handlers, purgeEveryMs: 20 });
  const purges = jest.spyOn(consumer.deadLetterStore, 'purgeResolved');

  const started = consumer.start();
  const stopped = consumer.stop();
  setUp();
  await Promise.all([started, stopped]);

  // The consumption set up after the stop was asked for is stopped, and no timer purges later.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect([consumptionStops.mock.calls.length, purges.mock.calls.length]).toEqual([1, 0]);
});
