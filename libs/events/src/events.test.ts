// The event mechanism against a real (embedded) PostgreSQL holding the tables a service's
// migrations create: the outbox written with the change or not at all, the relay marking only
// what the transport acknowledged, the consumer's idempotence, ordering and dead letters.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { PGlite, Transaction } from '@electric-sql/pglite';
import { serviceTokenSource, TokenVerifier } from '@platform/auth';
import { createTestPGlite, EMBEDDED_EXTENSIONS } from '@platform/db/testing';
import { createLogger, listen } from '@platform/service-kit';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { Registry } from 'prom-client';
import { domainEvent, eventCatalog, eventJsonSchemas, eventTypes } from './catalog';
import { EventConsumer } from './consumer';
import { EmbeddedTransport, eventLogRoutes, sqlCursorStore } from './embedded-transport';
import { fromCloudEventJson, MalformedEvent, type PlatformEvent, toCloudEvent } from './envelope';
import { InvalidEvent, recordEvent, type SqlClient, type SqlDatabase } from './outbox';
import { unitOfWork } from './outbox-signals';
import { OutboxRelay, startOutboxRelay } from './relay';
import type { Consumption, Delivery, EventTransport } from './transport';

// The tables as a service's migrations create them (orders-service has both sides).
const migrationsDir = path.join(__dirname, '../../../apps/orders-service/prisma/migrations');

function sqlClientOf(db: PGlite | Transaction): SqlClient {
  return {
    $queryRawUnsafe: async <T>(sql: string, ...values: unknown[]) => (await db.query(sql, values)).rows as T,
    $executeRawUnsafe: async (sql: string, ...values: unknown[]) => (await db.query(sql, values)).affectedRows ?? 0,
  };
}

function sqlDatabaseOf(db: PGlite): SqlDatabase {
  return { ...sqlClientOf(db), $transaction: (work) => db.transaction((tx) => work(sqlClientOf(tx))) };
}

const logger = createLogger('events-test', 'silent');
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const userId = '01900000-0000-7000-8000-000000000001';
const orderId = '01900000-0000-7000-8000-000000000002';
const user = { id: userId, role: 'customer' as const, name: 'Kim', email: 'kim@example.com', version: 1, createdAt: '2026-11-24T00:00:00.000Z' };

/** A transport that keeps what it acknowledged, or refuses while `down`. */
class RecordingTransport implements EventTransport {
  readonly kind = 'embedded';
  readonly published: PlatformEvent[] = [];
  down = false;
  async publish(events: readonly PlatformEvent[]): Promise<void> {
    if (this.down) throw new Error('broker unreachable');
    this.published.push(...events);
  }
  async consume(): Promise<Consumption> {
    return { stop: async () => undefined };
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('events', () => {
  let pglite: PGlite;
  let db: SqlDatabase;

  beforeAll(async () => {
    pglite = await createTestPGlite({ extensions: EMBEDDED_EXTENSIONS });
    for (const dir of readdirSync(migrationsDir).filter((name) => /^\d/.test(name)).sort()) await pglite.exec(readFileSync(path.join(migrationsDir, dir, 'migration.sql'), 'utf8'));
    db = sqlDatabaseOf(pglite);
  });
  beforeEach(() => pglite.exec('TRUNCATE outbox_events, event_sequences, processed_events, event_cursors, dead_letter_events RESTART IDENTITY'));
  afterAll(() => pglite.close());

  const outboxRows = async () => (await pglite.query<{ type: string; aggregate_id: string; sequence: number; published_at: Date | null; log_position: string | null }>('SELECT type, aggregate_id, sequence, published_at, log_position::text FROM outbox_events ORDER BY position')).rows;

  describe('the outbox', () => {
    it('records an event with the transaction that commits, numbering each aggregate 1, 2, 3', async () => {
      await db.$transaction(async (tx) => {
        await recordEvent(tx, domainEvent('user.created', userId, user));
        await recordEvent(tx, domainEvent('order.deleted', orderId, { id: orderId, userId }));
      });
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.updated', userId, { ...user, version: 2 })));
      expect((await outboxRows()).map((row) => [row.type, row.sequence])).toEqual([
        ['user.created', 1],
        ['order.deleted', 1],
        ['user.updated', 2],
      ]);
    });

    it('records nothing when the transaction rolls back', async () => {
      await expect(
        db.$transaction(async (tx) => {
          await recordEvent(tx, domainEvent('user.deleted', userId, { id: userId }));
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
      expect(await outboxRows()).toEqual([]);
      // The aggregate's numbering rolled back too: the next event is still its first.
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.deleted', userId, { id: userId })));
      expect((await outboxRows()).map((row) => row.sequence)).toEqual([1]);
    });

    it('refuses data its schema does not describe, such as a password hash', async () => {
      const leaky = { ...user, passwordHash: 'scrypt$...' } as typeof user;
      await expect(db.$transaction((tx) => recordEvent(tx, domainEvent('user.created', userId, leaky)))).rejects.toThrow(InvalidEvent);
      expect(await outboxRows()).toEqual([]);
    });
  });

  it('no event type has a field for a password, token, secret or key', () => {
    const names: string[] = [];
    const walk = (schema: unknown): void => {
      if (!schema || typeof schema !== 'object') return;
      const properties = (schema as { properties?: Record<string, unknown> }).properties ?? {};
      for (const [name, child] of Object.entries(properties)) {
        names.push(name);
        walk(child);
      }
      walk((schema as { items?: unknown }).items);
    };
    const schemas = eventJsonSchemas();
    expect(Object.keys(schemas)).toEqual(eventTypes);
    Object.values(schemas).forEach(walk);
    expect(names).toContain('email');
    expect(names.filter((name) => /password|token|secret|key|hash/i.test(name))).toEqual([]);
    for (const type of eventTypes) expect(schemas[type]).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', additionalProperties: false, title: type });
    expect(eventCatalog['user.deleted'].aggregate).toBe('user');
  });

  describe('the relay', () => {
    it('publishes committed events in order as CloudEvents and marks them only once the transport acknowledged', async () => {
      const transport = new RecordingTransport();
      const relay = new OutboxRelay(db, transport, logger, { service: 'users-service' });
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.created', userId, user)));
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.deleted', userId, { id: userId })));

      transport.down = true;
      await expect(relay.publishBatch()).rejects.toThrow('broker unreachable');
      expect((await outboxRows()).map((row) => row.published_at)).toEqual([null, null]);

      transport.down = false;
      expect(await relay.publishBatch()).toBe(2);
      expect(await relay.publishBatch()).toBe(0);
      const rows = await outboxRows();
      expect(rows.map((row) => row.log_position)).toEqual(['1', '2']);
      expect(rows.every((row) => row.published_at instanceof Date)).toBe(true);

      const [created, deleted] = transport.published.map((event) => event.toJSON());
      expect(created).toMatchObject({
        specversion: '1.0',
        source: '/users-service',
        type: 'user.created',
        subject: `user/${userId}`,
        datacontenttype: 'application/json',
        dataschema: 'urn:order-platform:event:user.created:v1',
        aggregatesequence: 1,
        data: user,
      });
      expect(typeof created.id).toBe('string');
      expect(Date.parse(String(created.time))).not.toBeNaN();
      expect(deleted).toMatchObject({ type: 'user.deleted', aggregatesequence: 2 });
      expect(fromCloudEventJson(created)).toMatchObject({ type: 'user.created', aggregateType: 'user', aggregateId: userId, sequence: 1, source: '/users-service' });
    });

    it('publishes a batch in commit order past position 9 (positions are numbers, not text: "10" is not before "9")', async () => {
      const transport = new RecordingTransport();
      for (let version = 1; version <= 12; version++) await db.$transaction((tx) => recordEvent(tx, domainEvent('user.updated', userId, { ...user, version })));
      expect(await new OutboxRelay(db, transport, logger, { service: 'users-service' }).publishBatch()).toBe(12);
      expect(transport.published.map((event) => event.toJSON().aggregatesequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
      expect((await outboxRows()).map((row) => row.log_position)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12']);
    });

    it('reports the backlog and its age, and counts what it published', async () => {
      const registry = new Registry();
      const relay = new OutboxRelay(db, new RecordingTransport(), logger, { service: 'users-service' }, registry);
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.deleted', userId, { id: userId })));
      expect(await registry.getSingleMetricAsString('outbox_backlog_events')).toContain('outbox_backlog_events 1');
      await relay.publishBatch();
      expect(await registry.getSingleMetricAsString('outbox_backlog_events')).toContain('outbox_backlog_events 0');
      expect(await registry.getSingleMetricAsString('outbox_oldest_unpublished_age_seconds')).toContain('outbox_oldest_unpublished_age_seconds 0');
      expect(await registry.getSingleMetricAsString('outbox_events_published_total')).toContain('outbox_events_published_total{type="user.deleted"} 1');
    });

    it('on an embedded database (no other process writes it) it does not poll: a unit of work and the trigger\'s NOTIFY wake it; on a shared one it polls every pollMs', async () => {
      const idlePasses = async (kind: 'pglite' | 'postgresql') => {
        let passes = 0;
        const counted: SqlDatabase = { ...db, $transaction: (work) => (passes++, db.$transaction(work)) };
        const notified: { wake?: () => void } = {};
        const listenTo = async (_channel: string, handlers: { onNotification(payload: string): void }) => ((notified.wake = () => handlers.onNotification('')), async () => undefined);
        const transport = new RecordingTransport();
        const { stop } = await startOutboxRelay({ prisma: counted, kind, listen: listenTo }, transport, logger, { service: 'users-service', pollMs: 50 });
        try {
          await wait(1_000);
          const idle = passes;
          // A unit of work that recorded an event wakes the relay in this process.
          await unitOfWork(counted, (tx) => recordEvent(tx, domainEvent('user.deleted', userId, { id: userId })));
          for (const giveUpAt = Date.now() + 2_000; transport.published.length < 1 && Date.now() < giveUpAt; ) await wait(10);
          // A row SQL wrote by itself (inventory's stock trigger) announces itself with NOTIFY.
          await db.$transaction((tx) => recordEvent(tx, domainEvent('user.deleted', orderId, { id: orderId })));
          notified.wake?.();
          for (const giveUpAt = Date.now() + 2_000; transport.published.length < 2 && Date.now() < giveUpAt; ) await wait(10);
          return { idle, published: transport.published.length };
        } finally {
          await stop();
        }
      };
      const embedded = await idlePasses('pglite');
      expect(embedded.idle).toBeLessThanOrEqual(1); // the pass at start
      expect(embedded.published).toBe(2);
      const shared = await idlePasses('postgresql');
      expect(shared.idle).toBeGreaterThanOrEqual(10);
      expect(shared.published).toBe(2);
    });
    it('on an embedded database, tries a failed pass again within pollMs, not at its once-a-minute look', async () => {
      // The broker (NATS_URL beside an embedded database) refuses the batch the commit woke the
      // relay for: nothing will announce that row again, so the relay must not wait its minute.
      const transport = new RecordingTransport();
      const { stop } = await startOutboxRelay({ prisma: db, kind: 'pglite' }, transport, logger, { service: 'users-service', pollMs: 50 });
      try {
        transport.down = true;
        await unitOfWork(db, (tx) => recordEvent(tx, domainEvent('user.deleted', userId, { id: userId })));
        await wait(100); // the woken pass failed
        transport.down = false;
        for (const giveUpAt = Date.now() + 2_000; transport.published.length < 1 && Date.now() < giveUpAt; ) await wait(10);
        expect(transport.published).toHaveLength(1);
      } finally {
        await stop();
      }
    });
  });

  describe('the consumer', () => {
    const published = async () => {
      const transport = new RecordingTransport();
      await new OutboxRelay(db, transport, logger, { service: 'users-service' }).publishBatch();
      return transport.published.map((event) => event.toJSON() as Record<string, unknown>);
    };
    const delivery = (event: Record<string, unknown>, attempt = 1): Delivery => ({ event, attempt });

    it('handles an event once: a redelivery and an older event of the same aggregate change nothing', async () => {
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.updated', userId, user)));
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.deleted', userId, { id: userId })));
      const [updated, deleted] = await published();
      const handled: string[] = [];
      const handler = async (event: { type: string }) => void handled.push(event.type);
      const consumer = new EventConsumer(db, new RecordingTransport(), logger, { consumer: 'orders-service', sources: ['users-service'], handlers: { 'user.updated': handler, 'user.deleted': handler } });

      expect(await consumer.deliver(delivery(deleted))).toBe('handled');
      expect(await consumer.deliver(delivery(deleted, 2))).toBe('duplicate');
      expect(await consumer.deliver(delivery(updated))).toBe('duplicate');
      expect(handled).toEqual(['user.deleted']);
    });

    it('passes over types it has no handler for', async () => {
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.created', userId, user)));
      const [created] = await published();
      const consumer = new EventConsumer(db, new RecordingTransport(), logger, { consumer: 'orders-service', sources: ['users-service'], handlers: {} });
      expect(await consumer.deliver(delivery(created))).toBe('ignored');
    });

    it("passes over, without parking, what a newer producer sends that it has no handler for: a type it does not know, or a newer shape of one it does not handle", async () => {
      // orders-service handles user.deleted only; users-service deployed ahead of it.
      const consumer = new EventConsumer(db, new RecordingTransport(), logger, { consumer: 'orders-service', sources: ['users-service'], handlers: { 'user.deleted': async () => undefined } });
      const envelope = { specversion: '1.0', source: '/users-service', subject: `user/${userId}`, aggregatesequence: 1 };
      const newType = { ...envelope, id: '01900000-0000-7000-8000-0000000000a1', type: 'user.suspended', data: { id: userId } };
      const newShape = { ...envelope, id: '01900000-0000-7000-8000-0000000000a2', type: 'user.updated', data: { ...user, nickname: 'K' } };
      expect(await consumer.deliver(delivery(newType))).toBe('ignored');
      expect(await consumer.deliver(delivery(newShape))).toBe('ignored');
      expect(await consumer.deadLetters()).toEqual([]);
    });

    it('a letter parked before this consumer passed over types it has no handler for (a type newer than it) is replayed as ignored, so the operator can clear it', async () => {
      const consumer = new EventConsumer(db, new RecordingTransport(), logger, { consumer: 'orders-service', sources: ['users-service'], handlers: { 'user.deleted': async () => undefined } });
      const newType = { specversion: '1.0', id: '01900000-0000-7000-8000-0000000000d1', source: '/users-service', type: 'user.suspended', subject: `user/${userId}`, aggregatesequence: 3, data: { id: userId } };
      await consumer.deadLetterStore.park(newType, 'unknown event type user.suspended', 1);
      expect(await consumer.replay(newType.id)).toBe('ignored');
      expect(await consumer.deadLetterStore.list('parked')).toEqual([]);
    });

    it("keeps a whole aggregate id that has a slash in it (inventory's SKUs are any text): two SKUs sharing a prefix are two aggregates, neither's event a duplicate of the other's", async () => {
      const handled: string[] = [];
      const consumer = new EventConsumer(db, new RecordingTransport(), logger, { consumer: 'users-service', sources: ['inventory-service'], handlers: { 'stock.changed': async (event) => void handled.push(event.aggregateId) } });
      const stockEvent = (n: number, sku: string) =>
        toCloudEvent('/inventory-service', { id: `01900000-0000-7000-8000-0000000000c${n}`, type: 'stock.changed', aggregateType: 'stock', aggregateId: sku, sequence: 1, data: { sku, available: 3, reserved: 0, lowStockThreshold: 10, low: true }, occurredAt: new Date() }).toJSON() as Record<string, unknown>;
      for (const [n, sku] of [[1, 'AB/12'], [2, 'AB/13'], [3, 'AB']] as const) expect(await consumer.deliver(delivery(stockEvent(n, sku)))).toBe('handled');
      expect(handled).toEqual(['AB/12', 'AB/13', 'AB']);
    });

    it('handles an event of a producer deployed ahead that added a field (a change the contracts gate calls safe), reading the fields it knows', async () => {
      const seen: unknown[] = [];
      const consumer = new EventConsumer(db, new RecordingTransport(), logger, { consumer: 'users-service', sources: ['orders-service'], handlers: { 'order.created': async (event) => void seen.push(event.data) } });
      const item = { id: '01900000-0000-7000-8000-0000000000b2', productId: '01900000-0000-7000-8000-0000000000b3', sku: 'SKU-1', productName: 'Mug', quantity: 1, unitPrice: 500, amount: 500 };
      const order = { id: orderId, userId, status: 'PENDING', amount: 500, currency: 'EUR', couponCode: null, items: [item], version: 1, createdAt: '2026-11-24T00:00:00.000Z' };
      const newer = {
        specversion: '1.0',
        id: '01900000-0000-7000-8000-0000000000b1',
        source: '/orders-service',
        type: 'order.created',
        subject: `order/${orderId}`,
        aggregatesequence: 1,
        data: { ...order, giftMessage: 'Happy birthday', items: [{ ...item, engraving: 'K' }] },
      };
      expect(await consumer.deliver(delivery(newer))).toBe('handled');
      expect(seen).toEqual([order]);
      expect(await consumer.deadLetters()).toEqual([]);
    });

    it('retries a failing handler, parks the event after its attempts, and replays it on request', async () => {
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.deleted', userId, { id: userId })));
      const [deleted] = await published();
      let failing = true;
      const handled: string[] = [];
      const consumer = new EventConsumer(db, new RecordingTransport(), logger, {
        consumer: 'orders-service',
        sources: ['users-service'],
        maxAttempts: 3,
        handlers: {
          'user.deleted': async (event) => {
            if (failing) throw new Error('cannot cancel the orders now');
            handled.push(event.aggregateId);
          },
        },
      });
      await expect(consumer.deliver(delivery(deleted, 1))).rejects.toThrow('cannot cancel');
      await expect(consumer.deliver(delivery(deleted, 2))).rejects.toThrow('cannot cancel');
      expect(await consumer.deliver(delivery(deleted, 3))).toBe('parked');
      const [parked] = await consumer.deadLetters();
      expect(parked).toMatchObject({ id: deleted.id, type: 'user.deleted', source: 'users-service'.replace(/^/, '/'), attempts: 3, error: 'cannot cancel the orders now', replayedAt: null });

      failing = false;
      expect(await consumer.replay(String(deleted.id))).toBe('handled');
      expect(handled).toEqual([userId]);
      expect((await consumer.deadLetters())[0].replayedAt).toBeInstanceOf(Date);
      expect(await consumer.replay(String(deleted.id))).toBeUndefined();
      // Handled now: a late redelivery changes nothing.
      expect(await consumer.deliver(delivery(deleted, 4))).toBe('duplicate');
    });

    it('parks an event that is not one of ours or does not match its schema', async () => {
      const consumer = new EventConsumer(db, new RecordingTransport(), logger, { consumer: 'orders-service', sources: ['users-service'], handlers: { 'user.deleted': async () => undefined } });
      const bad = { specversion: '1.0', id: '01900000-0000-7000-8000-0000000000ff', source: '/users-service', type: 'user.deleted', subject: `user/${userId}`, aggregatesequence: 1, data: { id: 'not-a-uuid' } };
      expect(await consumer.deliver(delivery(bad))).toBe('parked');
      expect(() => fromCloudEventJson(bad)).toThrow(MalformedEvent);
      expect(() => fromCloudEventJson({ ...bad, type: 'user.exploded' })).toThrow('unknown event type');
      expect((await consumer.deadLetters()).map((letter) => letter.id)).toEqual([bad.id]);
    });
  });

  it('a handler that never finishes counts as a failed attempt: its event is parked after its attempts and the events behind it flow', async () => {
    const secret = 'events-test-secret-events-test-secret-012';
    const app = express();
    app.use(eventLogRoutes(db, 'users-service', new TokenVerifier([secret], { audience: 'internal' })));
    const server = await listen(app, 0, '127.0.0.1');
    let consumer: EventConsumer | undefined;
    try {
      const hung = userId;
      const others = ['01900000-0000-7000-8000-0000000000b1', '01900000-0000-7000-8000-0000000000b2'];
      for (const id of [hung, ...others]) await db.$transaction((tx) => recordEvent(tx, domainEvent('user.updated', id, { ...user, id })));
      const transport = new EmbeddedTransport({ producers: { 'users-service': server.url }, serviceToken: serviceTokenSource(secret, 'orders-service'), cursors: sqlCursorStore(db), logger, pollMs: 20 });
      await new OutboxRelay(db, transport, logger, { service: 'users-service' }).publishBatch();
      const handled: string[] = [];
      consumer = new EventConsumer(db, transport, logger, {
        consumer: 'orders-service',
        sources: ['users-service'],
        maxAttempts: 2,
        handlerTimeoutMs: 100,
        // A call without a deadline to something that never answers.
        handlers: { 'user.updated': (event) => (event.aggregateId === hung ? new Promise<void>(() => undefined) : Promise.resolve(void handled.push(event.aggregateId))) },
      });
      await consumer.start();
      for (const giveUpAt = Date.now() + 10_000; handled.length < others.length && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(handled).toEqual(others);
      const [parked] = await consumer.deadLetters();
      expect(parked).toMatchObject({ type: 'user.updated', event: expect.objectContaining({ subject: `user/${hung}` }), attempts: 2, error: 'the user.updated handler did not finish within 100 ms' });
    } finally {
      await consumer?.stop();
      await server.close();
    }
  });

  it('a read waiting on an embedded database asks it at the start and the deadline only; on a shared one, every 250 ms', async () => {
    const secret = 'events-test-secret-events-test-secret-012';
    const token = await serviceTokenSource(secret, 'orders-service')();
    let logReads = 0;
    // The database as the route sees it, counting the reads of the published log.
    const counted = {
      $queryRawUnsafe: <T,>(query: string, ...values: unknown[]) => {
        if (query.includes('WHERE log_position >')) logReads++;
        return db.$queryRawUnsafe<T>(query, ...values);
      },
      $executeRawUnsafe: (query: string, ...values: unknown[]) => db.$executeRawUnsafe(query, ...values),
    } as SqlClient;
    const readsWhileWaiting = async (sharedDatabase: boolean) => {
      const app = express();
      app.use(eventLogRoutes(counted, 'users-service', new TokenVerifier([secret], { audience: 'internal' }), { sharedDatabase }));
      const server = await listen(app, 0, '127.0.0.1');
      try {
        logReads = 0;
        const res = await fetch(`${server.url}/internal/events?after=999999999&wait=1000`, { headers: { authorization: `Bearer ${token}` } });
        expect([res.status, ((await res.json()) as { events: unknown[] }).events]).toEqual([200, []]);
        return logReads;
      } finally {
        await server.close();
      }
    };
    expect(await readsWhileWaiting(false)).toBeLessThanOrEqual(2);
    expect(await readsWhileWaiting(true)).toBeGreaterThanOrEqual(4);
  });

  it('the embedded transport hands a consumer the producer\'s published events over HTTP, in order, and resumes from its cursor', async () => {
    const secret = 'events-test-secret-events-test-secret-012';
    const app = express();
    app.use(eventLogRoutes(db, 'users-service', new TokenVerifier([secret], { audience: 'internal' })));
    const server = await listen(app, 0, '127.0.0.1');
    try {
      for (let version = 1; version <= 3; version++) await db.$transaction((tx) => recordEvent(tx, domainEvent('user.updated', userId, { ...user, version })));
      const transport = new EmbeddedTransport({ producers: { 'users-service': server.url }, serviceToken: serviceTokenSource(secret, 'orders-service'), cursors: sqlCursorStore(db), logger, pollMs: 20 });
      await new OutboxRelay(db, transport, logger, { service: 'users-service' }).publishBatch();
      const seen: number[] = [];
      const consume = async () => {
        const consumption = await transport.consume({ consumer: 'orders-service', sources: ['users-service'], types: ['user.updated'] }, async (delivery) => void seen.push(Number(delivery.event.aggregatesequence)));
        for (const giveUpAt = Date.now() + 10_000; seen.length < 3 && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 20));
        await consumption.stop();
      };
      await consume();
      expect(seen).toEqual([1, 2, 3]);
      expect(await sqlCursorStore(db).get('users-service')).toBe('3');
      // A restart reads on from its cursor: nothing again, then what came after.
      await db.$transaction((tx) => recordEvent(tx, domainEvent('user.deleted', userId, { id: userId })));
      await new OutboxRelay(db, transport, logger, { service: 'users-service' }).publishBatch();
      seen.length = 2;
      await consume();
      expect(seen).toEqual([1, 2, 4]);
    } finally {
      await server.close();
    }
  });

  describe('a producer not answering yet, as when the services start in any order', () => {
    const secret = 'events-test-secret-events-test-secret-012';
    /** A port nothing listens on: the producer has not started. */
    async function closedPortUrl(): Promise<string> {
      const server = await listen(express(), 0, '127.0.0.1');
      await server.close();
      return server.url;
    }
    async function linesWhileFollowing(producerUrl: string, startGraceMs: number | undefined): Promise<Record<string, unknown>[]> {
      const lines: Record<string, unknown>[] = [];
      const captured = pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()) }));
      const transport = new EmbeddedTransport({ producers: { 'users-service': producerUrl }, serviceToken: serviceTokenSource(secret, 'orders-service'), cursors: sqlCursorStore(db), logger: captured, pollMs: 20, waitMs: 0, startGraceMs });
      const consumption = await transport.consume({ consumer: 'orders-service', sources: ['users-service'], types: ['user.updated'] }, async () => undefined);
      await wait(600); // several reads fail meanwhile
      await consumption.stop();
      return lines;
    }

    it('is one info line while it has never been read and the start grace lasts, with no warning', async () => {
      const lines = await linesWhileFollowing(await closedPortUrl(), undefined);
      expect(lines.filter((line) => line.msg === 'waiting for an event log: its producer is not answering yet')).toEqual([
        expect.objectContaining({ level: 30, source: 'users-service', reason: expect.stringContaining('ECONNREFUSED') }),
      ]);
      expect(lines.filter((line) => Number(line.level) >= 40)).toEqual([]);
    });

    it('is warned of with its error once the grace is over, as the runbook says', async () => {
      const lines = await linesWhileFollowing(await closedPortUrl(), 0);
      expect(lines.filter((line) => line.msg === 'reading an event log failed; trying again')).toEqual([
        expect.objectContaining({ level: 40, source: 'users-service', failures: 1, err: expect.objectContaining({ code: 'SERVICE_UNAVAILABLE' }) }),
      ]);
    });
  });

  describe('the embedded transport with several replicas of one consumer (one database, one cursor per producer)', () => {
    const secret = 'events-test-secret-events-test-secret-012';
    const subscription = { consumer: 'orders-service', sources: ['users-service'], types: ['user.updated'] };
    let server: Awaited<ReturnType<typeof listen>>;
    beforeEach(async () => {
      const app = express();
      app.use(eventLogRoutes(db, 'users-service', new TokenVerifier([secret], { audience: 'internal' })));
      server = await listen(app, 0, '127.0.0.1');
    });
    afterEach(() => server.close());

    const replica = () => new EmbeddedTransport({ producers: { 'users-service': server.url }, serviceToken: serviceTokenSource(secret, 'orders-service'), cursors: sqlCursorStore(db), logger, pollMs: 20, waitMs: 200, leaseMs: 1_500 });
    /** Commits and publishes the next versions of the user, `from` to `to`. */
    const publishVersions = async (from: number, to: number) => {
      for (let version = from; version <= to; version++) await db.$transaction((tx) => recordEvent(tx, domainEvent('user.updated', userId, { ...user, version })));
      await new OutboxRelay(db, new RecordingTransport(), logger, { service: 'users-service' }).publishBatch();
    };
    const until = async (done: () => boolean) => {
      for (const giveUpAt = Date.now() + 15_000; !done() && Date.now() < giveUpAt; ) await wait(20);
    };

    it('hands each event to one replica only, once and in order, and the other reads on from the cursor when that one stops', async () => {
      // Every handling, by replica, with no dedupe of its own: what the transport hands over.
      const handled: { replica: string; sequence: number }[] = [];
      const record = (name: string) => async (delivery: Delivery) => void handled.push({ replica: name, sequence: Number(delivery.event.aggregatesequence) });
      const consumptions = { a: await replica().consume(subscription, record('a')), b: await replica().consume(subscription, record('b')) };
      try {
        // Published in rounds while both replicas read, so both are there to take each page.
        for (let round = 0; round < 4; round++) {
          await publishVersions(round * 5 + 1, round * 5 + 5);
          await wait(150);
        }
        await until(() => handled.length >= 20);
        await wait(500); // time for a second replica to hand an event over again, were it reading too
        expect(handled.map((entry) => entry.sequence)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
        const reader = handled[0].replica as 'a' | 'b';
        expect(new Set(handled.map((entry) => entry.replica))).toEqual(new Set([reader]));

        // The reading replica stops (a rollout): it gives the lease up, and the other reads on from the cursor.
        await consumptions[reader].stop();
        await publishVersions(21, 25);
        await until(() => handled.length >= 25);
        await wait(300);
        expect(handled.map((entry) => entry.sequence)).toEqual(Array.from({ length: 25 }, (_, index) => index + 1));
        expect(handled.slice(20).map((entry) => entry.replica)).toEqual(Array(5).fill(reader === 'a' ? 'b' : 'a'));
      } finally {
        await consumptions.a.stop();
        await consumptions.b.stop();
      }
    });

    it('an idle reader renews its lease when a third of it is gone, not at every read (each renewal is a write)', async () => {
      const store = sqlCursorStore(db);
      let claims = 0;
      const counted = { ...store, claim: (...args: Parameters<typeof store.claim>) => (claims++, store.claim(...args)) };
      let reads = 0;
      const app = express();
      app.use((req, _res, next) => ((reads += req.path === '/internal/events' ? 1 : 0), next()));
      app.use(eventLogRoutes(db, 'users-service', new TokenVerifier([secret], { audience: 'internal' })));
      const counting = await listen(app, 0, '127.0.0.1');
      const handled: number[] = [];
      // Lease 1.5 s, reads waiting 200 ms: a renewal at most every 1.5 × 2/3 − 0.2 = 0.8 s keeps the
      // lease whole through the next read and the handling of its page.
      const reader = new EmbeddedTransport({ producers: { 'users-service': counting.url }, serviceToken: serviceTokenSource(secret, 'orders-service'), cursors: counted, logger, pollMs: 20, waitMs: 200, leaseMs: 1_500 });
      const consumption = await reader.consume(subscription, async (delivery) => void handled.push(Number(delivery.event.aggregatesequence)));
      try {
        await wait(2_400);
        // About 11 reads of 200 ms waits; a claim at most every 800 ms. Before: a claim per read.
        expect(reads).toBeGreaterThanOrEqual(6);
        expect(claims).toBeLessThanOrEqual(Math.ceil(reads / 2));
        // Still the reader, still on time: what is published reaches it.
        await publishVersions(1, 2);
        await until(() => handled.length === 2);
        expect(handled).toEqual([1, 2]);
      } finally {
        await consumption.stop();
        await counting.close();
      }
    });

    it('a replica that died holding the lease keeps the log from the others only until its lease runs out', async () => {
      await publishVersions(1, 3);
      // A replica that read, then was killed: its lease stays behind, unrenewed, for 1.5 s.
      expect(await sqlCursorStore(db).claim('users-service', 'killed-replica', 1_500)).toBe('0');
      const handled: number[] = [];
      const consumption = await replica().consume(subscription, async (delivery) => void handled.push(Number(delivery.event.aggregatesequence)));
      try {
        await wait(300);
        expect(handled).toEqual([]); // the lease is still the killed replica's
        await until(() => handled.length >= 3);
        expect(handled).toEqual([1, 2, 3]);
      } finally {
        await consumption.stop();
      }
    });
  });
});
