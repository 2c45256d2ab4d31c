// orders-service killed (SIGKILL) while clients place orders, then started again. Each client
// places an order with its own Idempotency-Key and retries it with the same key until it gets
// 201, as the API tells clients to. No order may be lost or doubled, no stock may stay reserved
// for an order that does not exist, the gateway answers 503 + Retry-After while the service is
// down, and orders go through again within 5 s of it being back.
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { type FaultStack, report, startFaultStack, until } from './fault-stack';
import { type Answer, brief, call, tally } from './traffic';

/**
 * How long inventory may keep stock reserved for an order that never committed (orders-service
 * died between Reserve and its commit). orders records each placement before reserving, with a
 * deadline of the request's own deadline (the gateway's 10 s) plus PLACEMENT_MARGIN_MS (5 s); the
 * restarted process's sweeper (every 200 ms here) then releases it: 15.2 s after the kill at most,
 * so 16 s after the load ends is a bound with room to spare.
 */
const RECONCILE_BOUND_MS = Number(process.env.FAULT_RESERVATION_RECONCILE_MS ?? 16_000);
/** Plenty in stock: no order is refused for stock. */
const SKUS = ['MS-WL-002', 'CB-USBC-005', 'MT-DESK-016', 'HB-USB-017'];

interface Placement {
  userId: string;
  key: string;
  items: { productId: string; quantity: number }[];
  answers: Answer[];
  /** The order id of the 201 the client got. */
  orderId?: string;
  /** Gave up: the key is held by the request the crash cut (until it is abandoned, 60 s). */
  held?: boolean;
}

let world: FaultStack;
const placements: Placement[] = [];
let killedAt: number;
let downSeenAt: number;
let restartAt: number;
let readyAt: number;
let recoveryMs: number;
let stockBefore: Map<string, number>;

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function query<T>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Units of each SKU reserved in inventory and held by committed orders, and the total of each SKU. */
async function stockPicture() {
  const inventory = world.databases.DATABASE_URL_INVENTORY;
  const stock = await query<{ sku: string; available: number; reserved: number }>(inventory, 'SELECT sku, available, reserved FROM stock WHERE sku = ANY($1)', [SKUS]);
  const reservations = await query<{ sku: string; units: string }>(inventory, "SELECT sku, SUM(quantity) AS units FROM reservations WHERE status = 'RESERVED' AND sku = ANY($1) GROUP BY sku", [SKUS]);
  const ordered = await query<{ sku: string; units: string }>(world.databases.DATABASE_URL_ORDERS, 'SELECT sku, SUM(quantity) AS units FROM order_items WHERE sku = ANY($1) GROUP BY sku', [SKUS]);
  const bySku = (rows: { sku: string; units: string }[]) => Object.fromEntries(SKUS.map((sku) => [sku, Number(rows.find((row) => row.sku === sku)?.units ?? 0)]));
  return {
    reservedColumn: Object.fromEntries(SKUS.map((sku) => [sku, stock.find((row) => row.sku === sku)?.reserved ?? 0])),
    reservations: bySku(reservations),
    ordered: bySku(ordered),
    totals: new Map(stock.map((row) => [row.sku, row.available + row.reserved])),
  };
}

beforeAll(async () => {
  world = await startFaultStack('orders');
  const reader = await world.customer();
  const catalog = (await call('GET', '/v1/products?size=100', { token: reader.token })).body.items as { id: string; sku: string }[];
  const products = SKUS.map((sku) => catalog.find((product) => product.sku === sku)?.id ?? `missing ${sku}`);
  stockBefore = (await stockPicture()).totals;

  let placing = true;
  const place = async (n: number): Promise<Placement> => {
    const { token, userId } = await world.customer();
    const items = [{ productId: products[n % products.length], quantity: 1 + (n % 2) }, ...(n % 3 === 0 ? [{ productId: products[(n + 1) % products.length], quantity: 1 }] : [])];
    const placement: Placement = { userId, key: randomUUID(), items, answers: [] };
    placements.push(placement);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const answer = await call('POST', '/v1/orders', { token, body: { items }, headers: { 'idempotency-key': placement.key, 'x-request-timeout-ms': '3000' } });
      placement.answers.push(answer);
      if (answer.status === 201) {
        placement.orderId = answer.body.id;
        return placement;
      }
      // No client here sends a key twice at once, so this is a call the crash cut still
      // holding the key (until the service deems it abandoned, after a minute): stop retrying.
      if (answer.status === 409 && answer.code === 'CONFLICT') {
        placement.held = true;
        return placement;
      }
      if (answer.status >= 400 && answer.status < 500) return placement; // refused for good
      // As a client would: after Retry-After (at most a second here), the same key again.
      await wait(Math.min(1_000, Number(answer.retryAfter ?? 0) * 1_000 || 100));
    }
    return placement;
  };
  let next = 0;
  const clients = Array.from({ length: 4 }, async () => {
    while (placing && next < 200) await place(next++);
  });
  try {
    const placed = () => placements.filter((placement) => placement.orderId).length;
    await until('15 orders placed', 30_000, async () => placed() >= 15);
    killedAt = Date.now();
    process.kill(world.pids['orders-service'], 'SIGKILL');
    await world.nextLine(/orders-service exited/, 10_000);
    downSeenAt = Date.now();
    const answersSince = (from: number) => placements.flatMap((placement) => placement.answers).filter((answer) => answer.startedAt >= from).length;
    await until('12 answers while orders-service is down', 20_000, async () => answersSince(downSeenAt) >= 12);
    restartAt = Date.now();
    await world.restart('orders-service');
    readyAt = Date.now();
    // A new order, retried as a client would until it goes through (the other clients may be
    // busy retrying keys the crash cut).
    const probe = await place(next++);
    recoveryMs = probe.orderId ? probe.answers[probe.answers.length - 1].endedAt - readyAt : Infinity;
    const placedAtRestart = placed();
    await until('10 more orders placed', 30_000, async () => placed() >= placedAtRestart + 10);
  } finally {
    placing = false;
    await Promise.all(clients);
  }
  const all = placements.flatMap((placement) => placement.answers);
  report(
    `orders-service killed after ${placements.filter((placement) => placement.orderId && placement.answers[placement.answers.length - 1].endedAt <= killedAt).length} orders; down ${restartAt - downSeenAt} ms until restarted, ready ${readyAt - restartAt} ms later; ` +
      `first order through ${recoveryMs} ms after ready; ${placements.length} placements (${placements.filter((placement) => placement.orderId).length} placed, ${placements.filter((placement) => placement.held).length} held by a cut request), ` +
      `${all.length} calls: ${tally(all)}`,
  );
}, 150_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

it('loses and doubles no order: every 201 the client saw exists once, retries with its key add none', async () => {
  const rows = await query<{ id: string; user_id: string }>(world.databases.DATABASE_URL_ORDERS, 'SELECT id, user_id FROM orders');
  const byUser = new Map<string, string[]>();
  for (const row of rows) byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row.id]);
  const ours = new Set(placements.map((placement) => placement.userId));
  expect(rows.filter((row) => !ours.has(row.user_id))).toEqual([]);
  for (const placement of placements) {
    const ids = new Set(placement.answers.filter((answer) => answer.status === 201).map((answer) => answer.body.id as string));
    expect(ids.size).toBeLessThanOrEqual(1);
    expect(byUser.get(placement.userId) ?? []).toEqual(placement.orderId ? [placement.orderId] : []);
  }
  expect(placements.filter((placement) => placement.orderId).length).toBeGreaterThanOrEqual(25);
});

it(`leaks no stock: within ${RECONCILE_BOUND_MS} ms, inventory holds exactly what committed orders hold`, async () => {
  const atEnd = await stockPicture();
  const started = Date.now();
  let picture = atEnd;
  const balanced = () => SKUS.every((sku) => picture.reservations[sku] === picture.ordered[sku] && picture.reservedColumn[sku] === picture.ordered[sku]);
  while (!balanced() && Date.now() - started < RECONCILE_BOUND_MS) {
    await wait(250);
    picture = await stockPicture();
  }
  const leaked = (p: typeof picture) => SKUS.reduce((sum, sku) => sum + p.reservedColumn[sku] - p.ordered[sku], 0);
  report(`stock: ${leaked(atEnd)} units reserved without a committed order when the load ended, ${leaked(picture)} after ${Date.now() - started} ms`);
  expect(picture.reservations).toEqual(picture.ordered);
  expect(picture.reservedColumn).toEqual(picture.ordered);
  expect(picture.totals).toEqual(stockBefore);
});

/** What the restarted process may answer before start.js sees it ready: an order, or for a key a cut call holds 409 CONFLICT + Retry-After (504 if that wait outlives the call's budget). */
const servedByTheService = (placement: Placement, answer: Answer) =>
  answer.status === 201 || (placement.held === true && ((answer.status === 409 && answer.code === 'CONFLICT' && answer.retryAfter !== null) || answer.status === 504));
const untilReady = (answer: Answer) => answer.startedAt >= downSeenAt && answer.endedAt <= readyAt;
const answersOf = (filter: (answer: Answer) => boolean) => placements.flatMap((placement) => placement.answers.filter(filter).map((answer) => ({ placement, answer })));

it('answers 503 SERVICE_UNAVAILABLE with Retry-After while orders-service is down', () => {
  const down = answersOf(untilReady);
  expect(down.filter(({ answer }) => answer.endedAt <= restartAt).length).toBeGreaterThanOrEqual(10);
  expect(down.filter(({ placement, answer }) => !((answer.status === 503 && answer.code === 'SERVICE_UNAVAILABLE' && /^\d+$/.test(answer.retryAfter ?? '')) || servedByTheService(placement, answer))).map(({ answer }) => brief(answer))).toEqual([]);
});

it('answers every other call as the service does (201; 409/504 for keys cut calls hold); a call the kill cut 502 or 503', () => {
  const cut = (answer: Answer) => answer.startedAt <= downSeenAt && answer.endedAt >= killedAt;
  const others = answersOf((answer) => !untilReady(answer));
  expect(others.filter(({ placement, answer }) => !(servedByTheService(placement, answer) || (cut(answer) && (answer.status === 502 || answer.status === 503)))).map(({ answer }) => brief(answer))).toEqual([]);
});

it('places orders again within 5 s of orders-service being ready', () => {
  expect(recoveryMs).toBeLessThan(5_000);
});
