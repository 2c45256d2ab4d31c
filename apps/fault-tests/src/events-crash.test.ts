// Domain events under kill -9: customers place and cancel orders and delete their accounts
// while the test SIGKILLs, at random moments, orders-service (it produces order events and
// consumes user.deleted), catalog-service (a consumer of user.deleted), users-service (it
// produces user.deleted and consumes every service's events for webhooks) and the broker (a
// nats-server of its own, JetStream on a temp store), each EVENTS_KILLS times. Afterwards:
// - every committed change is one event at every consumer: a witness consumer (libs/events'
//   EventConsumer over the same JetStream, its own database) handled each order event in the
//   orders outbox exactly once, orders-service and catalog-service each recorded every
//   user.deleted of the users outbox in their processed_events, and users-service logged every
//   order event and every event of its own once (webhook_events, the log GET /v1/events reads);
// - each order's events came in sequence order (1, 2, … without a gap), at the witness and in
//   users-service's log;
// - no uncommitted change produced one: every event handled is in a committed outbox, every
//   order event is about an order in the orders table, and each canceled order has one
//   order.canceled.
// Bounded: the kills stop after EVENTS_KILLS each or EVENTS_FAULT_MS, whichever comes first.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Pool } from 'pg';
import { EventConsumer, NatsTransport, type ReceivedEvent, type SqlDatabase } from '@platform/events';
import { createLogger } from '@platform/service-kit';
import { alive, NatsServer } from '@platform/test-kit';
import { type FaultStack, OFFSET, report, startFaultStack, until } from './fault-stack';
import { call } from './traffic';

const KILLS = Number(process.env.EVENTS_KILLS ?? 20);
// A restart takes 6 to 25 s on this shared machine: 20 of each, one after the other, need minutes.
const FAULT_MS = Number(process.env.EVENTS_FAULT_MS ?? 10 * 60_000);
/** After the load: every outbox published and every consumer caught up, within this. */
const SETTLE_MS = 120_000;
const SKUS = ['MS-WL-002', 'CB-USBC-005', 'MT-DESK-016', 'HB-USB-017'];
const TARGETS = ['orders-service', 'catalog-service', 'users-service', 'nats-server'] as const;
type Target = (typeof TARGETS)[number];

const logger = createLogger('events-witness', 'silent');
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = (min: number, max: number) => min + Math.random() * (max - min);

let world: FaultStack;
let nats: NatsServer;
let witnessPool: Pool;
let witnessTransport: NatsTransport;
let witness: EventConsumer;
const pools = new Map<string, Pool>();
const kills: Record<Target, number> = { 'orders-service': 0, 'catalog-service': 0, 'users-service': 0, 'nats-server': 0 };
const tally = { placed: 0, cancelRequested: 0, usersDeleted: 0, calls: 0, failedCalls: 0 };
/** Orders of the customers who deleted their account: open when they did, so canceled by the user.deleted consumer. */
const ordersOfDeletedUsers: string[] = [];
let faultMs = 0;
let settleMs = 0;

/** A connection pool per database of the fault cluster, closed at the end. */
function database(url: string): Pool {
  let pool = pools.get(url);
  if (!pool) pools.set(url, (pool = new Pool({ connectionString: url, max: 2 })));
  return pool;
}
const rows = async <T>(url: string, sql: string, values: unknown[] = []) => (await database(url).query(sql, values)).rows as T[];

/** The raw-SQL surface EventConsumer uses, over node-postgres. */
function sqlDatabase(pool: Pool): SqlDatabase {
  const client = {
    $queryRawUnsafe: async <T>(query: string, ...values: unknown[]) => (await pool.query(query, values)).rows as T,
    $executeRawUnsafe: async (query: string, ...values: unknown[]) => (await pool.query(query, values)).rowCount ?? 0,
  };
  return { ...client, $transaction: (work) => work(client) };
}

/** The witness's database: the domain-events tables every service has (its migration), and what it saw. */
async function witnessDatabase(serverUrl: string): Promise<Pool> {
  const name = `events_witness_${randomUUID().slice(0, 8)}`;
  await rows(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const pool = new Pool({ connectionString: url.toString(), max: 2 });
  const migrations = path.resolve(__dirname, '../../catalog-service/prisma/migrations');
  const domainEvents = readdirSync(migrations).find((entry) => entry.endsWith('_domain_events'));
  if (!domainEvents) throw new Error(`no *_domain_events migration in ${migrations}`);
  await pool.query(readFileSync(path.join(migrations, domainEvents, 'migration.sql'), 'utf8'));
  await pool.query(`CREATE TABLE witnessed (
    event_id uuid PRIMARY KEY, type text NOT NULL, aggregate_id text NOT NULL, sequence int NOT NULL,
    handled int NOT NULL DEFAULT 1, arrival bigserial)`);
  return pool;
}

/** What one customer does: places an order (retrying with its key), then maybe cancels it or deletes their account. */
async function customerSession(n: number, products: string[]): Promise<void> {
  const { token, userId } = await world.customer();
  const send = async (method: string, url: string, options: { body?: unknown; headers?: Record<string, string> } = {}) => {
    // As a client would: 5xx and 429 are tried again (the same key), for 60 s at most.
    for (const giveUpAt = Date.now() + 60_000; Date.now() < giveUpAt; ) {
      tally.calls++;
      const answer = await call(method, url, { token, ...options, headers: { 'x-request-timeout-ms': '5000', ...options.headers } });
      if (answer.status < 500 && answer.status !== 429) return answer;
      tally.failedCalls++;
      await wait(Math.min(1_000, Number(answer.retryAfter ?? 0) * 1_000 || 200));
    }
    return undefined;
  };
  const placed = await send('POST', '/v1/orders', { body: { items: [{ productId: products[n % products.length], quantity: 1 }] }, headers: { 'idempotency-key': randomUUID() } });
  if (placed?.status !== 201) return;
  tally.placed++;
  const orderId = placed.body.id as string;
  if (n % 3 === 0) {
    const canceled = await send('POST', `/v1/orders/${orderId}/cancellation`, { body: { reason: 'changed my mind' } });
    if (canceled?.status === 202) tally.cancelRequested++;
  } else if (n % 3 === 1 && n % 2 === 0) {
    const deleted = await send('DELETE', `/v1/users/${userId}`);
    if (deleted?.status === 204) {
      tally.usersDeleted++;
      ordersOfDeletedUsers.push(orderId);
    }
  }
}

/** Kills `target` at once (SIGKILL) and brings it back as its supervisor would. */
async function killAndRestart(target: Target): Promise<void> {
  kills[target]++;
  if (target === 'nats-server') {
    await nats.kill();
    await wait(between(100, 1_500));
    await nats.restart();
    return;
  }
  const pid = world.pids[target];
  process.kill(pid, 'SIGKILL');
  await until(`${target} (${pid}) gone`, 15_000, async () => !alive(pid));
  await world.restart(target);
}

beforeAll(async () => {
  nats = await NatsServer.start(OFFSET + 4222);
  world = await startFaultStack('events', { NATS_URL: nats.url, EVENTS_POLL_MS: '200' });
  witnessPool = await witnessDatabase(world.postgres.url());
  witnessTransport = await NatsTransport.connect({ servers: nats.url, name: 'events-witness', logger, ackWaitMs: 5_000 });
  const record = async (event: ReceivedEvent) => {
    await witnessPool.query(
      `INSERT INTO witnessed (event_id, type, aggregate_id, sequence) VALUES ($1, $2, $3, $4) ON CONFLICT (event_id) DO UPDATE SET handled = witnessed.handled + 1`,
      [event.id, event.type, event.aggregateId, event.sequence],
    );
  };
  const handlers = Object.fromEntries(['order.created', 'order.updated', 'order.confirmed', 'order.canceled', 'order.shipped', 'order.unlinked', 'order.deleted', 'order.cancellation.completed'].map((type) => [type, record]));
  witness = new EventConsumer(sqlDatabase(witnessPool), witnessTransport, logger, { consumer: 'events-witness', sources: ['orders-service'], handlers, maxAttempts: 1_000 });
  await witness.start();

  const reader = await world.customer();
  const catalog = (await call('GET', '/v1/products?size=100', { token: reader.token })).body.items as { id: string; sku: string }[];
  const products = SKUS.map((sku) => catalog.find((product) => product.sku === sku)?.id ?? `missing ${sku}`);

  const started = Date.now();
  let loading = true;
  let next = 0;
  // Eight at once: a restart takes seconds on a busy machine, so the up windows are short.
  const customers = Array.from({ length: 8 }, async () => {
    while (loading) await customerSession(next++, products).catch((error: unknown) => console.error('fault-tests events: a session failed', error));
  });
  try {
    // One loop per target, side by side: each kills its target at a random moment, waits for
    // it to be back, and again, until it has done so KILLS times (or the time is up).
    await Promise.all(
      TARGETS.map(async (target) => {
        while (kills[target] < KILLS && Date.now() - started < FAULT_MS) {
          await wait(between(1_000, 5_000));
          await killAndRestart(target);
        }
      }),
    );
    await wait(2_000); // traffic after the last kill
  } finally {
    faultMs = Date.now() - started;
    loading = false;
    await Promise.all(customers);
  }

  // Settled: every outbox published, the witness has every order event, each consumer every user.deleted.
  const settleStart = Date.now();
  const unpublished = async (url: string) => Number((await rows<{ n: string }>(url, 'SELECT count(*) AS n FROM outbox_events WHERE published_at IS NULL'))[0].n);
  let state = '';
  await until('outboxes published and consumers caught up', SETTLE_MS, async () => {
    const pendingCancellations = Number((await rows<{ n: string }>(world.databases.DATABASE_URL_ORDERS, "SELECT count(*) AS n FROM cancellations WHERE status = 'REQUESTED'"))[0].n);
    const [ordersBacklog, usersBacklog] = [await unpublished(world.databases.DATABASE_URL_ORDERS), await unpublished(world.databases.DATABASE_URL_USERS)];
    if (pendingCancellations || ordersBacklog || usersBacklog) {
      state = `${pendingCancellations} cancellations pending, ${ordersBacklog} orders and ${usersBacklog} users events unpublished`;
      return false;
    }
    const orderEvents = Number((await rows<{ n: string }>(world.databases.DATABASE_URL_ORDERS, 'SELECT count(*) AS n FROM outbox_events'))[0].n);
    const witnessed = Number((await witnessPool.query('SELECT count(*) AS n FROM witnessed')).rows[0].n);
    const deletions = Number((await rows<{ n: string }>(world.databases.DATABASE_URL_USERS, "SELECT count(*) AS n FROM outbox_events WHERE type = 'user.deleted'"))[0].n);
    const handledBy = async (url: string) => Number((await rows<{ n: string }>(url, "SELECT count(*) AS n FROM processed_events WHERE source = '/users-service' AND aggregate_type = 'user'"))[0].n);
    const [byOrders, byCatalog] = [await handledBy(world.databases.DATABASE_URL_ORDERS), await handledBy(world.databases.DATABASE_URL_CATALOG)];
    const userEvents = Number((await rows<{ n: string }>(world.databases.DATABASE_URL_USERS, 'SELECT count(*) AS n FROM outbox_events'))[0].n);
    const loggedBy = async (source: string) => Number((await rows<{ n: string }>(world.databases.DATABASE_URL_USERS, 'SELECT count(*) AS n FROM webhook_events WHERE source = $1', [source]))[0].n);
    const [ordersLogged, usersLogged] = [await loggedBy('orders-service'), await loggedBy('users-service')];
    state =
      `${witnessed}/${orderEvents} order events witnessed, user.deleted handled by orders ${byOrders}/${deletions} and catalog ${byCatalog}/${deletions}, ` +
      `users-service logged ${ordersLogged}/${orderEvents} order and ${usersLogged}/${userEvents} user events`;
    return witnessed >= orderEvents && byOrders >= deletions && byCatalog >= deletions && ordersLogged >= orderEvents && usersLogged >= userEvents;
  }).catch((error: Error) => {
    throw new Error(`${error.message}: ${state}`);
  });
  settleMs = Date.now() - settleStart;
}, FAULT_MS + SETTLE_MS + 240_000);

afterAll(async () => {
  await witness?.stop().catch(() => undefined);
  await witnessTransport?.close();
  await witnessPool?.end();
  for (const pool of pools.values()) await pool.end();
  await world?.stop();
  await nats?.stop();
}, 90_000);

interface OutboxRow {
  id: string;
  type: string;
  aggregate_id: string;
  sequence: number;
}
interface WitnessedRow extends OutboxRow {
  event_id: string;
  handled: number;
}

it(`kills orders-service, catalog-service, users-service and the broker at least ${KILLS} times each, under load`, async () => {
  const witnessed = (await witnessPool.query('SELECT count(*) AS n FROM witnessed')).rows[0].n;
  report(
    `events: ${kills['orders-service']} kills of orders-service, ${kills['catalog-service']} of catalog-service, ${kills['users-service']} of users-service, ${kills['nats-server']} of nats-server in ${Math.round(faultMs / 1000)} s; ` +
      `${tally.placed} orders placed, ${tally.cancelRequested} cancellations, ${tally.usersDeleted} accounts deleted (${tally.calls} calls, ${tally.failedCalls} answered 5xx/429 and retried); ` +
      `${witnessed} order events witnessed; settled ${settleMs} ms after the load`,
  );
  for (const target of TARGETS) expect(kills[target]).toBeGreaterThanOrEqual(KILLS);
  // Load through short up windows (a restart takes 6 to 25 s here): two runs placed 19 and 24.
  expect(tally.placed).toBeGreaterThanOrEqual(10);
  expect(tally.cancelRequested).toBeGreaterThanOrEqual(3);
  expect(tally.usersDeleted).toBeGreaterThanOrEqual(1);
});

it('hands every committed order event to the witness consumer exactly once, and nothing else', async () => {
  const outbox = await rows<OutboxRow>(world.databases.DATABASE_URL_ORDERS, 'SELECT id, type, aggregate_id, sequence FROM outbox_events');
  const witnessed = (await witnessPool.query<WitnessedRow>('SELECT event_id, type, aggregate_id, sequence, handled FROM witnessed')).rows;
  const key = (row: { type: string; aggregate_id: string; sequence: number }) => `${row.type} ${row.aggregate_id} #${row.sequence}`;
  expect(new Map(witnessed.map((row) => [row.event_id, key(row)]))).toEqual(new Map(outbox.map((row) => [row.id, key(row)])));
  expect(witnessed.filter((row) => row.handled !== 1)).toEqual([]);
  expect(Number((await witnessPool.query('SELECT count(*) AS n FROM dead_letter_events')).rows[0].n)).toBe(0);
});

it("hands each order's events over in sequence order: 1, 2, … with no gap", async () => {
  const witnessed = (await witnessPool.query<WitnessedRow>('SELECT aggregate_id, sequence FROM witnessed ORDER BY arrival')).rows;
  const seen = new Map<string, number[]>();
  for (const row of witnessed) seen.set(row.aggregate_id, [...(seen.get(row.aggregate_id) ?? []), row.sequence]);
  const outOfOrder = [...seen].filter(([, sequences]) => sequences.some((sequence, index) => sequence !== index + 1));
  expect(outOfOrder).toEqual([]);
});

it('gives no uncommitted change an event: order events match the orders table, one order.canceled per canceled order', async () => {
  const orders = await rows<{ id: string; status: string }>(world.databases.DATABASE_URL_ORDERS, 'SELECT id, status FROM orders');
  const witnessed = (await witnessPool.query<WitnessedRow>('SELECT type, aggregate_id FROM witnessed')).rows;
  const created = witnessed.filter((row) => row.type === 'order.created').map((row) => row.aggregate_id);
  expect(created.sort()).toEqual(orders.map((order) => order.id).sort());
  const canceledEvents = witnessed.filter((row) => row.type === 'order.canceled').map((row) => row.aggregate_id);
  expect(canceledEvents.sort()).toEqual(orders.filter((order) => order.status === 'CANCELED').map((order) => order.id).sort());
});

it("records every user.deleted once at each consumer (orders-service and catalog-service), and cancels the deleted users' open orders, unlinked", async () => {
  const deletions = await rows<{ id: string; aggregate_id: string }>(world.databases.DATABASE_URL_USERS, "SELECT id, aggregate_id FROM outbox_events WHERE type = 'user.deleted'");
  const remaining = await rows<{ id: string }>(world.databases.DATABASE_URL_USERS, 'SELECT id FROM users WHERE id = ANY($1)', [deletions.map((row) => row.aggregate_id)]);
  expect(remaining).toEqual([]); // each event is about a deletion that committed
  const expected = new Map(deletions.map((row) => [row.aggregate_id, row.id]));
  for (const url of [world.databases.DATABASE_URL_ORDERS, world.databases.DATABASE_URL_CATALOG]) {
    const processed = await rows<{ aggregate_id: string; last_event_id: string }>(url, "SELECT aggregate_id, last_event_id FROM processed_events WHERE source = '/users-service' AND aggregate_type = 'user'");
    expect(new Map(processed.map((row) => [row.aggregate_id, row.last_event_id]))).toEqual(expected);
  }
  const orders = await rows<{ id: string; status: string; user_id: string | null }>(world.databases.DATABASE_URL_ORDERS, 'SELECT id, status, user_id FROM orders WHERE id = ANY($1)', [ordersOfDeletedUsers]);
  expect(orders.filter((order) => order.status !== 'CANCELED' || order.user_id !== null)).toEqual([]);
  expect(orders).toHaveLength(ordersOfDeletedUsers.length);
});

it("users-service, consuming every service's events for webhooks, logs each committed order event and each of its own once, each order's in sequence order", async () => {
  const orderOutbox = await rows<OutboxRow>(world.databases.DATABASE_URL_ORDERS, 'SELECT id, type, aggregate_id, sequence FROM outbox_events');
  const userOutbox = await rows<{ id: string }>(world.databases.DATABASE_URL_USERS, 'SELECT id FROM outbox_events');
  const logged = await rows<{ id: string; source: string; subject: string }>(world.databases.DATABASE_URL_USERS, "SELECT id, source, subject FROM webhook_events WHERE source IN ('orders-service', 'users-service') ORDER BY position");
  // One row per event id (its key): every committed event there, nothing else.
  const loggedFrom = (source: string) => logged.filter((row) => row.source === source).map((row) => row.id);
  expect(loggedFrom('orders-service').sort()).toEqual(orderOutbox.map((row) => row.id).sort());
  expect(loggedFrom('users-service').sort()).toEqual(userOutbox.map((row) => row.id).sort());
  // In the order it logged them: each order's events 1, 2, … (what GET /v1/events and per-resource ordered webhooks show).
  const sequenceOf = new Map(orderOutbox.map((row) => [row.id, row.sequence]));
  const seen = new Map<string, number[]>();
  for (const row of logged.filter((entry) => entry.source === 'orders-service')) seen.set(row.subject, [...(seen.get(row.subject) ?? []), sequenceOf.get(row.id) ?? -1]);
  expect([...seen].filter(([, sequences]) => sequences.some((sequence, index) => sequence !== index + 1))).toEqual([]);
});
