// A rolling restart under load, as Kubernetes rolls a Deployment: while clients keep reading,
// placing orders (with Idempotency-Keys) and querying GraphQL through HAProxy, every replica of
// every app in turn gets SIGTERM, exits, starts again and waits until HAProxy has it back. The
// drain (readiness fails first, HAProxy's check takes the replica out, then the listener closes)
// and HAProxy's retries of reads must hide all of it: no read fails, every write succeeds or is
// told to retry (503 + Retry-After), a client retrying with its key ends with one order, and the
// orders, reservations and stock in the databases agree exactly afterwards.
import { randomUUID } from 'node:crypto';
import { type Answer, brief, CLUSTER_APPS, type Door, door, REPLICAS, tally } from '@platform/test-kit';
import { ADMIN, type ClusterWorld, report } from './cluster-world';

const CLIENTS = 3;
/** Between two calls of one client: steady traffic that leaves the restarting replicas some CPU. */
const PAUSE_MS = 10;
/** Enough customers that none reaches the default rate limit (100 calls in 10 s) at full speed. */
const CUSTOMERS = 40;
/** A write is tried again with its key at most this many times, a client's patience. */
const WRITE_ATTEMPTS = 10;
/** The rollout order: services first, the gateway last (as a release usually goes). */
const ORDER = [...CLUSTER_APPS];

interface Write {
  key: string;
  customer: number;
  attempts: Answer[];
  /** The order the client ended with (the last 201's id). */
  orderId?: string;
}

let world: ClusterWorld;
let call: Door;
const reads: Answer[] = [];
const writes: Write[] = [];
const restarts: { what: string; at: number; exitedAfterMs: number; upAfterMs: number; callsDuring: number }[] = [];
let stockBefore: Map<string, { available: number; reserved: number }>;
let stockAfter: Map<string, { available: number; reserved: number }>;
let reservations: { order_id: string; sku: string; quantity: number }[];
let orderLines: { reservation_key: string; sku: string; quantity: number }[];
let ordersById: Map<string, { user_id: string }>;
let keys: { user_id: string; key: string; response_status: number | null; order_id: string | null }[];
let pendingReleases: number;

async function stock(): Promise<Map<string, { available: number; reserved: number }>> {
  const { rows } = await (await world.database('INVENTORY')).query<{ sku: string; available: number; reserved: number }>('SELECT sku, available, reserved FROM stock ORDER BY sku');
  return new Map(rows.map((row) => [row.sku, { available: row.available, reserved: row.reserved }]));
}

/** The rollout and what it must leave, on the cluster `getWorld` gives (cluster.test.ts); restarts every replica, so it runs last. */
export function rollingRestart(getWorld: () => ClusterWorld): void {
  beforeAll(async () => {
    world = getWorld();
    call = door(world.cluster.url);
    const customers = await Promise.all(Array.from({ length: CUSTOMERS }, () => world.customer()));
    const products = (await call('GET', '/v1/products?size=4&sort=createdAt,asc', { token: customers[0].token })).body.items as { id: string; sku: string }[];
    // Enough stock that no order is refused for the lack of it.
    const admin = (await call('POST', '/v1/tokens', { body: ADMIN })).body.accessToken as string;
    for (const product of products) expect((await call('PUT', `/v1/stock-levels/${product.sku}`, { token: admin, body: { onHand: 1_000_000 } })).status).toBe(200);
    stockBefore = await stock();

    const placeOrder = async (index: number) => {
      const write: Write = { key: randomUUID(), customer: index % CUSTOMERS, attempts: [] };
      writes.push(write);
      const product = products[index % products.length];
      for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt += 1) {
        const answer = await call('POST', '/v1/orders', { token: customers[write.customer].token, body: { items: [{ productId: product.id, quantity: 1 }] }, headers: { 'idempotency-key': write.key } });
        write.attempts.push(answer);
        if (answer.status === 201) {
          write.orderId = answer.body.id;
          return;
        }
        if (answer.status !== 503 || !answer.headers.get('retry-after')) return; // not to be retried: the test reports it
        // Sooner than Retry-After asks (1–5 s) to keep the test short; the key makes it safe.
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    };
    const read = async (index: number) => {
      const customer = customers[index % CUSTOMERS];
      const shapes = [
        () => call('GET', '/v1/products?size=10', { token: customer.token }),
        () => call('GET', '/v1/orders?size=5', { token: customer.token }),
        () => call('POST', '/v1/graphql', { token: customer.token, body: { query: '{ orders(first: 3) { id amount user { name } product { name } } }' } }),
        () => call('GET', `/v1/stock-levels/${products[index % products.length].sku}`, { token: customer.token }),
      ];
      reads.push(await shapes[index % shapes.length]());
    };

    let stopped = false;
    let next = 0;
    const client = async () => {
      while (!stopped) {
        const index = next++;
        // One call in five places an order; the rest read.
        await (index % 5 === 4 ? placeOrder(index) : read(index));
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      }
    };
    const traffic = Promise.all(Array.from({ length: CLIENTS }, client));
    const answered = () => reads.length + writes.reduce((sum, write) => sum + write.attempts.length, 0);
    try {
      for (const app of ORDER) {
        for (let replica = 0; replica < REPLICAS; replica += 1) {
          const before = answered();
          const at = Date.now();
          const timing = await world.cluster.restart(app, replica);
          restarts.push({ what: `${app} ${replica + 1}`, at, ...timing, callsDuring: answered() - before });
        }
      }
    } finally {
      stopped = true;
      await traffic;
    }

    // Reservations a failed placement left behind are released by the orders sweeper (every 200 ms
    // here): wait until none is pending, then read the three databases.
    const orders = await world.database('ORDERS');
    const deadline = Date.now() + 20_000;
    do {
      pendingReleases = Number((await orders.query<{ count: string }>('SELECT count(*) FROM pending_releases')).rows[0].count);
      if (pendingReleases) await new Promise((resolve) => setTimeout(resolve, 200));
    } while (pendingReleases && Date.now() < deadline);
    stockAfter = await stock();
    reservations = (await (await world.database('INVENTORY')).query("SELECT order_id, sku, quantity FROM reservations WHERE status = 'RESERVED'")).rows;
    orderLines = (await orders.query("SELECT o.reservation_key, i.sku, i.quantity FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.status <> 'CANCELED'")).rows;
    // The rollout's customers' orders and keys (the cluster served other tests before).
    const customerIds = customers.map((customer) => customer.userId);
    ordersById = new Map((await orders.query<{ id: string; user_id: string }>('SELECT id, user_id FROM orders WHERE user_id = ANY($1::uuid[])', [customerIds])).rows.map((row) => [row.id, row]));
    keys = (await orders.query("SELECT user_id, key, response_status, response_body->>'id' AS order_id FROM idempotency_keys WHERE user_id = ANY($1::uuid[])", [customerIds])).rows;

    report(`restarts (SIGTERM → exited → back in HAProxy): ${restarts.map((restart) => `${restart.what} at ${new Date(restart.at).toISOString().slice(11, 23)}: ${restart.exitedAfterMs}/${restart.upAfterMs} ms, ${restart.callsDuring} calls`).join('; ')}`);
    report(`reads: ${reads.length} (${tally(reads)}); writes: ${writes.length}, attempts ${tally(writes.flatMap((write) => write.attempts))}; orders ${ordersById.size}`);
  }, 400_000);


  it('kept the traffic flowing through every restart', () => {
    expect(restarts).toHaveLength(ORDER.length * REPLICAS);
    expect(restarts.filter((restart) => restart.callsDuring < 5).map((restart) => restart.what)).toEqual([]);
    expect(writes.length).toBeGreaterThan(20);
  });

  it('answered every read: no connection error, no 5xx, no GraphQL error', () => {
    expect(reads.filter((answer) => answer.status !== 200).map(brief)).toEqual([]);
    expect(reads.filter((answer) => answer.what === 'POST /v1/graphql' && answer.body?.errors).map((answer) => JSON.stringify(answer.body.errors))).toEqual([]);
  });

  it('answered every write with 201, or with 503 and Retry-After; retried with its key, each client ended with its order', () => {
    const attempts = writes.flatMap((write) => write.attempts);
    expect(attempts.filter((answer) => answer.status !== 201 && !(answer.status === 503 && answer.headers.get('retry-after'))).map(brief)).toEqual([]);
    expect(writes.filter((write) => !write.orderId).map((write) => write.attempts.map(brief).join(' / '))).toEqual([]);
  });

  it('made exactly one order per Idempotency-Key', () => {
    // Every order in the database is one a client ended with, once.
    const clientOrders = writes.map((write) => write.orderId);
    expect(new Set(clientOrders).size).toBe(writes.length);
    expect([...ordersById.keys()].sort()).toEqual([...clientOrders].sort());
    // And each key remembers that order.
    const byKey = new Map(keys.map((row) => [row.key, row]));
    for (const write of writes) expect([write.key, byKey.get(write.key)?.response_status, byKey.get(write.key)?.order_id]).toEqual([write.key, 201, write.orderId]);
  });

  it('reconciles orders, reservations and stock exactly', () => {
    expect(pendingReleases).toBe(0);
    const lines = (rows: { key: string; sku: string; quantity: number }[]) => rows.map((row) => `${row.key} ${row.sku} ×${row.quantity}`).sort();
    // Every live order (of every test) holds exactly its lines in inventory, and nothing else is held.
    expect(lines(reservations.map((row) => ({ key: row.order_id, sku: row.sku, quantity: row.quantity })))).toEqual(lines(orderLines.map((row) => ({ key: row.reservation_key, sku: row.sku, quantity: row.quantity }))));
    for (const [sku, before] of stockBefore) {
      const after = stockAfter.get(sku);
      const held = reservations.filter((row) => row.sku === sku).reduce((sum, row) => sum + row.quantity, 0);
      // What is reserved is what orders hold; on hand (free plus reserved) did not change.
      expect({ sku, reserved: after?.reserved, onHand: (after?.available ?? 0) + (after?.reserved ?? 0) }).toEqual({ sku, reserved: held, onHand: before.available + before.reserved });
    }
  });
}
