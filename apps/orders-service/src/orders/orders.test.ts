// The orders API as a client sees it: real HTTP, real database, catalog and inventory as real
// servers on loopback.
import path from 'node:path';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import type { InventoryGateway } from '@platform/inventory-contract';
import { createLogger, type Listening } from '@platform/service-kit';
import { apiClient, tokenFor } from '@platform/test-kit';
import { createOrdersApp, createOrderUseCases } from '../app';
import type { Catalog } from '../catalog/client';
import { PrismaClient } from '../generated/prisma/client';
import { FakeCatalog, type FakeInventory, type OrdersWithFakes, startOrdersWithFakes } from '../testing/fakes';
import { CLAIM_MARGIN_MS, formerRequestHashOf, IdempotencyStore, requestHashOf } from '../idempotency/store';
import { OrderRepository, type OrderWrites } from './repository';
import { ReservationLedger } from '../stock/repository';
import { PLACEMENT_MARGIN_MS } from '../stock/reservations';
import { Sweeper } from '../sweeper';
import type { OrderStatus } from './status';

const JWT_SECRET = 'orders-test-secret-orders-test-secret-012';
let database: Database<PrismaClient>;
// Each test gets fresh fakes and an app of its own, so none meets the stock, reservations,
// delays, refusals or stopped catalog another left behind. The database, slow to create, is
// shared: each test reads only its own products' and users' rows.
let catalog: FakeCatalog;
let inventory: FakeInventory;
let inventoryClient: InventoryGateway;
let server: Listening;
let built: Awaited<ReturnType<typeof createOrdersApp>>;
let catalogUrl: string;
let harness: OrdersWithFakes;
const call = apiClient(() => server.url);
let admin: string;
let alice: { token: string; userId: string };
let bob: { token: string; userId: string };

beforeAll(async () => {
  database = await openTestDatabase({ service: 'orders', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  admin = (await tokenFor(JWT_SECRET, 'admin')).token;
  alice = await tokenFor(JWT_SECRET);
  bob = await tokenFor(JWT_SECRET);
});

beforeEach(async () => {
  harness = await startOrdersWithFakes(database.prisma, { jwtSecret: JWT_SECRET, name: 'orders-test' });
  ({ built, server, catalog, catalogUrl, inventory, inventoryClient } = harness);
});

afterEach(async () => {
  await harness?.stop();
});

afterAll(async () => {
  await database?.close();
});

/** Resolves once `done` holds, checking every few milliseconds; fails the test after `withinMs`. */
async function until(done: () => boolean | Promise<boolean>, withinMs = 5_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`condition not reached within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function stocked(stock: number, overrides: Parameters<FakeCatalog['add']>[0] = {}) {
  const product = catalog.add(overrides);
  inventory.stock.set(product.sku, stock);
  return product;
}

async function placeOrder(token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call('POST', '/orders', { token, body, headers });
}

async function newOrder(token = alice.token, quantity = 1, extra: Record<string, unknown> = {}) {
  const product = stocked(100, { price: 12_000 });
  const res = await placeOrder(token, { items: [{ productId: product.id, quantity }], ...extra });
  expect(res.status).toBe(201);
  return { order: res.body, product };
}

describe('POST /orders', () => {
  it('prices from the catalog, reserves stock and answers 201 with Location and the order', async () => {
    const keyboard = stocked(10, { price: 129_000, name: 'Mechanical Keyboard' });
    const mouse = stocked(10, { price: 39_000 });
    const res = await placeOrder(alice.token, { items: [{ productId: keyboard.id, quantity: 2 }, { productId: mouse.id, quantity: 1 }], couponCode: 'WELCOME-10' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/v1/orders/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.any(String),
      orderId: res.body.id,
      userId: alice.userId,
      status: 'PENDING',
      amount: 297_000,
      currency: 'KRW',
      productId: keyboard.id,
      couponCode: 'WELCOME-10',
      hasCoupon: true,
      items: [
        { id: expect.any(String), orderId: res.body.id, productId: keyboard.id, sku: keyboard.sku, productName: 'Mechanical Keyboard', quantity: 2, unitPrice: 129_000, amount: 258_000 },
        { id: expect.any(String), orderId: res.body.id, productId: mouse.id, sku: mouse.sku, productName: mouse.name, quantity: 1, unitPrice: 39_000, amount: 39_000 },
      ],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      canceledAt: null,
    });
    expect(inventory.stock.get(keyboard.sku)).toBe(8);
    expect(inventory.held(mouse.sku)).toBe(1);
  });

  it('refuses a client-sent amount with 400 UNKNOWN_FIELD', async () => {
    const product = stocked(5);
    const res = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 1 }], amount: 1 });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ field: 'amount', code: 'UNKNOWN_FIELD', message: "Unknown field 'amount'." }]);
  });

  it('answers 400 for missing items and 422 for rule-breaking ones, all at once', async () => {
    expect((await placeOrder(alice.token, {})).status).toBe(400);
    const product = stocked(5);
    const res = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 0 }], couponCode: 'bad code' });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['couponCode', 'items[0].quantity']);
    const twice = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 1 }, { productId: product.id, quantity: 2 }] });
    expect(twice.status).toBe(422);
  });

  it('answers 422 naming the items whose product does not exist', async () => {
    const product = stocked(5);
    const res = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 1 }, { productId: '01a20097-b6ee-740a-909d-9896572adaa7', quantity: 1 }] });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([expect.objectContaining({ field: 'items[1].productId', code: 'NOT_ALLOWED' })]);
    expect(inventory.stock.get(product.sku)).toBe(5);
  });

  it('answers 409 OUT_OF_STOCK and keeps no partial reservation', async () => {
    const plenty = stocked(10);
    const scarce = stocked(1);
    const res = await placeOrder(alice.token, { items: [{ productId: plenty.id, quantity: 3 }, { productId: scarce.id, quantity: 2 }] });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('OUT_OF_STOCK');
    expect(res.body.errors[0].field).toBe('items[1].quantity');
    expect(inventory.stock.get(plenty.sku)).toBe(10);
    expect(inventory.held(plenty.sku)).toBe(0);
    expect(await database.prisma.order.count({ where: { userId: alice.userId, items: { some: { productId: plenty.id } } } })).toBe(0);
  });

  it('gives the stock back when the database write fails after reserving', async () => {
    const product = stocked(4, { name: 'x'.repeat(300) }); // longer than product_name allows
    const res = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 2 }] });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('INTERNAL');
    expect(res.text).not.toMatch(/product_name|varchar|INSERT|Prisma/i);
    expect(inventory.stock.get(product.sku)).toBe(4);
    expect(inventory.held(product.sku)).toBe(0);
  });

  it('answers 503 with Retry-After when the catalog is down', async () => {
    const product = stocked(4);
    await catalog.stop();
    try {
      const res = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 1 }] });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.headers.get('retry-after')).toBe('1');
    } finally {
      await catalog.start(Number(new URL(catalogUrl).port));
    }
  });

  it('answers 504 when inventory does not answer within the request deadline, and keeps nothing reserved', async () => {
    const product = stocked(4);
    inventory.delayMs = 800;
    try {
      const res = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 1 }] }, { 'x-request-timeout-ms': '300' });
      expect(res.status).toBe(504);
      expect(res.body.code).toBe('GATEWAY_TIMEOUT');
    } finally {
      inventory.delayMs = 0;
    }
    // The Reserve commits after the deadline (this fake is slow, not dead); the queued release returns it.
    await until(() => inventory.held(product.sku) === 1);
    expect(await database.prisma.order.count({ where: { items: { some: { productId: product.id } } } })).toBe(0);
    expect(inventory.stock.get(product.sku)).toBe(3);
    await built.orders.stock.retryPendingReleases({ graceMs: 0 });
    expect(inventory.stock.get(product.sku)).toBe(4);
  });
});

describe('ids a client sends in a body or a query', () => {
  it('are read in any case (RFC 9562), naming the same resources; answers give them lowercase', async () => {
    const product = stocked(10, { price: 1_000 });
    const placed = await placeOrder(alice.token, { items: [{ productId: product.id.toUpperCase(), quantity: 1 }] });
    expect(placed.status).toBe(201);
    expect(placed.body.items[0].productId).toBe(product.id);
    const id: string = placed.body.id;
    expect(placed.headers.get('location')).toBe(`/v1/orders/${id}`);
    const read = await call('GET', `/orders/${id.toUpperCase()}`, { token: alice.token });
    expect([read.status, read.body.id, read.headers.get('etag')]).toEqual([200, id, '"1"']);
    const patched = await call('PATCH', `/orders/${id.toUpperCase()}`, { token: alice.token, body: { couponCode: 'CASE-1' }, headers: { 'if-match': '"1"' } });
    expect([patched.status, patched.body.id, patched.headers.get('etag')]).toEqual([200, id, '"2"']);
    const mine = await call('GET', `/orders?userId=${alice.userId.toUpperCase()}`, { token: alice.token });
    expect([mine.status, mine.body.items.map((order: { id: string }) => order.id)]).toEqual([200, expect.arrayContaining([id])]);
    const found = await call('POST', '/orders/search', { token: alice.token, body: { ids: [id.toUpperCase()] } });
    expect(found.body.items.map((order: { id: string }) => order.id)).toEqual([id]);
    const canceled = await call('POST', `/orders/${id.toUpperCase()}/cancellation`, { token: alice.token, body: {} });
    expect([canceled.status, canceled.body.orderId, canceled.headers.get('location')]).toEqual([202, id, `/v1/orders/${id}/cancellation`]);
  });

  it('answer 422 INVALID_FORMAT on their field when they are not ids (readable, but not an id), never 5xx', async () => {
    const list = await call('GET', '/orders?userId=x', { token: admin });
    expect([list.status, list.body.errors]).toEqual([422, [{ field: 'userId', code: 'INVALID_FORMAT', message: expect.any(String) }]]);
    const place = await placeOrder(alice.token, { items: [{ productId: 'ro', quantity: 1 }] });
    expect([place.status, place.body.errors]).toEqual([422, [{ field: 'items[0].productId', code: 'INVALID_FORMAT', message: expect.any(String) }]]);
    const search = await call('POST', '/orders/search', { token: admin, body: { ids: ['nope'] } });
    expect([search.status, search.body.errors[0].field]).toEqual([422, 'ids[0]']);
  });
});

describe('Idempotency-Key', () => {
  it('are purged by the sweeper once expired (24 h), and replay until then', async () => {
    const product = stocked(10);
    const key = `purge-${Date.now()}`;
    expect((await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 1 }] }, { 'idempotency-key': key })).status).toBe(201);
    expect(await database.prisma.idempotencyKey.count({ where: { key } })).toBe(1);
    await built.sweeper.sweep();
    expect(await database.prisma.idempotencyKey.count({ where: { key } })).toBe(1); // not expired yet
    await database.prisma.idempotencyKey.updateMany({ where: { key }, data: { expiresAt: new Date(Date.now() - 1_000) } });
    await built.sweeper.sweep();
    expect(await database.prisma.idempotencyKey.count({ where: { key } })).toBe(0);
  });

  it('replays the first response for the same key and body, and refuses another body with 422', async () => {
    const product = stocked(10);
    const body = { items: [{ productId: product.id, quantity: 1 }] };
    const first = await placeOrder(alice.token, body, { 'idempotency-key': 'key-replay-1' });
    const again = await placeOrder(alice.token, body, { 'idempotency-key': 'key-replay-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(inventory.stock.get(product.sku)).toBe(9);
    const other = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 2 }] }, { 'idempotency-key': 'key-replay-1' });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Keys belong to their user: bob's same key is a new request.
    expect((await placeOrder(bob.token, body, { 'idempotency-key': 'key-replay-1' })).body.id).not.toBe(first.body.id);
  });

  it('replays the first response byte for byte, status, ETag and Location included, after the order changed', async () => {
    const product = stocked(10);
    const body = { items: [{ productId: product.id, quantity: 1 }] };
    const first = await placeOrder(alice.token, body, { 'idempotency-key': 'key-bytes-1' });
    expect([first.status, first.headers.get('etag')]).toEqual([201, '"1"']);
    expect((await call('PATCH', `/orders/${first.body.id}`, { token: alice.token, body: { couponCode: 'LATER-1' } })).headers.get('etag')).toBe('"2"');
    const again = await placeOrder(alice.token, body, { 'idempotency-key': 'key-bytes-1' });
    expect([again.status, again.headers.get('etag'), again.headers.get('location'), again.text]).toEqual([201, '"1"', first.headers.get('location'), first.text]);
  });

  it('are shared by GraphQL createOrder: the same key and input return the order placed once, another input is IDEMPOTENCY_KEY_REUSED', async () => {
    const product = stocked(10);
    const createOrder = 'mutation($input: CreateOrderInput!, $key: String) { createOrder(input: $input, idempotencyKey: $key) { id status version } }';
    const graphql = (variables: Record<string, unknown>) => call('POST', '/graphql', { token: alice.token, body: { query: createOrder, variables } });
    const input = { items: [{ productId: product.id, quantity: 2 }] };
    const first = await graphql({ input, key: 'gql-key-1' });
    expect(first.body.data.createOrder).toEqual({ id: expect.any(String), status: 'PENDING', version: 1 });
    const again = await graphql({ input, key: 'gql-key-1' });
    expect(again.body).toEqual(first.body);
    expect(inventory.stock.get(product.sku)).toBe(8);
    // The key is the user's, whichever transport sent it: REST replays the order the graph placed.
    const rest = await placeOrder(alice.token, input, { 'idempotency-key': 'gql-key-1' });
    expect([rest.status, rest.body.id, rest.headers.get('etag')]).toEqual([201, first.body.data.createOrder.id, '"1"']);
    const reused = await graphql({ input: { items: [{ productId: product.id, quantity: 1 }] }, key: 'gql-key-1' });
    expect(reused.body).toEqual({ data: { createOrder: null }, errors: [{ message: expect.any(String), path: ['createOrder'], extensions: { code: 'IDEMPOTENCY_KEY_REUSED' } }] });
    expect(await database.prisma.order.count({ where: { items: { some: { productId: product.id } } } })).toBe(1);
  });

  it('takes a couponCode of null as no coupon, as GraphQL\'s nullable input field and REST alike', async () => {
    const product = stocked(10);
    const createOrder = 'mutation($input: CreateOrderInput!) { createOrder(input: $input) { id couponCode } }';
    const viaGraph = await call('POST', '/graphql', { token: alice.token, body: { query: createOrder, variables: { input: { items: [{ productId: product.id, quantity: 1 }], couponCode: null } } } });
    expect(viaGraph.body).toEqual({ data: { createOrder: { id: expect.any(String), couponCode: null } } });
    const viaRest = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 1 }], couponCode: null });
    expect([viaRest.status, viaRest.body.couponCode]).toEqual([201, null]);
  });

  it('replays, not refuses, a retry that sends couponCode null where the first left it out, and the other way round; another coupon is 422', async () => {
    const product = stocked(10);
    const items = [{ productId: product.id, quantity: 1 }];
    const first = await placeOrder(alice.token, { items, couponCode: null }, { 'idempotency-key': 'key-null-coupon-1' });
    const absent = await placeOrder(alice.token, { items }, { 'idempotency-key': 'key-null-coupon-1' });
    expect([first.status, absent.status, absent.body.id]).toEqual([201, 201, first.body.id]);
    const second = await placeOrder(alice.token, { items }, { 'idempotency-key': 'key-null-coupon-2' });
    const asNull = await placeOrder(alice.token, { items, couponCode: null }, { 'idempotency-key': 'key-null-coupon-2' });
    expect([second.status, asNull.status, asNull.body.id]).toEqual([201, 201, second.body.id]);
    const coupon = await placeOrder(alice.token, { items, couponCode: 'SAVE-10' }, { 'idempotency-key': 'key-null-coupon-2' });
    expect([coupon.status, coupon.body.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
    expect(inventory.stock.get(product.sku)).toBe(8);
  });

  it('still replays, across the deploy, a key the version before answered for a body with couponCode null', async () => {
    const product = stocked(10);
    const body = { items: [{ productId: product.id, quantity: 1 }], couponCode: null };
    const first = await placeOrder(alice.token, body, { 'idempotency-key': 'key-former-hash-1' });
    // The version before fingerprinted the body with its null field kept.
    await database.prisma.idempotencyKey.updateMany({ where: { userId: alice.userId, key: 'key-former-hash-1' }, data: { requestHash: formerRequestHashOf(body) } });
    const retry = await placeOrder(alice.token, body, { 'idempotency-key': 'key-former-hash-1' });
    expect([retry.status, retry.body.id]).toEqual([201, first.body.id]);
    expect(inventory.stock.get(product.sku)).toBe(9);
  });

  it('names the fields of a refused createOrder from its argument, as GraphQL validation does: input.items[0]…', async () => {
    const product = stocked(1);
    const createOrder = 'mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }';
    const short = await call('POST', '/graphql', { token: alice.token, body: { query: createOrder, variables: { input: { items: [{ productId: product.id, quantity: 2 }] } } } });
    expect(short.body.errors[0].extensions).toEqual({ code: 'OUT_OF_STOCK', errors: [{ field: 'input.items[0].quantity', code: 'OUT_OF_RANGE', message: expect.any(String) }] });
    const invalid = await call('POST', '/graphql', { token: alice.token, body: { query: createOrder, variables: { input: { items: [{ productId: product.id, quantity: 0 }] } } } });
    expect(invalid.body.errors[0].extensions.errors[0].field).toBe('input.items[0].quantity'); // parseArgument's own naming, for comparison
    // REST names the same refusal from the body.
    const rest = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 2 }] });
    expect([rest.status, rest.body.errors[0].field]).toEqual([409, 'items[0].quantity']);
  });

  it('answers a duplicate waiting on a held key 409 with Retry-After within its budget, when the database slows down meanwhile', async () => {
    const product = stocked(10);
    const key = `slow-held-${Date.now()}`;
    const input = { items: [{ productId: product.id, quantity: 1 }] };
    // Another request holds the key (its claim is fresh, unanswered).
    await database.prisma.idempotencyKey.create({ data: { userId: alice.userId, key, requestHash: requestHashOf(input), expiresAt: new Date(Date.now() + 60_000) } });
    // The database gets loaded while the duplicate waits: its first look at the key is quick, every
    // later claim attempt takes SLOW_CLAIM_MS, so a look begun with a fixed 200 ms left ends past the deadline.
    const SLOW_CLAIM_MS = 2_200;
    await database.prisma.$executeRawUnsafe('CREATE SEQUENCE slow_claim_attempts');
    await database.prisma.$executeRawUnsafe(`CREATE FUNCTION slow_idempotency_claim() RETURNS trigger AS $$ BEGIN IF NEW.key LIKE 'slow-held-%' AND nextval('slow_claim_attempts') > 1 THEN PERFORM pg_sleep(${SLOW_CLAIM_MS / 1000}); END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await database.prisma.$executeRawUnsafe('CREATE TRIGGER slow_idempotency_claim BEFORE INSERT ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION slow_idempotency_claim()');
    try {
      // The budget the gateway forwards is the time its own timer gives the call: an answer after it is the gateway's 504.
      // Two slow looks do not fit in it, one does, with room to spare.
      const BUDGET_MS = 2 * SLOW_CLAIM_MS;
      const sent = Date.now();
      const res = await placeOrder(alice.token, input, { 'idempotency-key': key, 'x-request-timeout-ms': String(BUDGET_MS) });
      const answeredAfter = Date.now() - sent;
      expect([res.status, res.body.code, res.headers.get('retry-after')]).toEqual([409, 'CONFLICT', '1']);
      expect(answeredAfter).toBeLessThan(BUDGET_MS);
    } finally {
      await database.prisma.$executeRawUnsafe('DROP TRIGGER slow_idempotency_claim ON idempotency_keys');
      await database.prisma.$executeRawUnsafe('DROP FUNCTION slow_idempotency_claim');
      await database.prisma.$executeRawUnsafe('DROP SEQUENCE slow_claim_attempts');
    }
    expect(await database.prisma.order.count({ where: { items: { some: { productId: product.id } } } })).toBe(0);
  }, 15_000);

  it('creates exactly one order for 100 concurrent POSTs with one key', async () => {
    const product = stocked(1000);
    const body = { items: [{ productId: product.id, quantity: 1 }] };
    const results = await Promise.all(Array.from({ length: 100 }, () => placeOrder(alice.token, body, { 'idempotency-key': 'key-burst' })));
    const ids = new Set(results.filter((res) => res.status === 201).map((res) => res.body.id));
    expect(results.map((res) => res.status).filter((code) => code !== 201 && code !== 409)).toEqual([]);
    expect(ids.size).toBe(1);
    expect(await database.prisma.order.count({ where: { items: { some: { productId: product.id } } } })).toBe(1);
    expect(inventory.stock.get(product.sku)).toBe(999);
  }, 30_000);
});

describe('GET /orders/{id}', () => {
  it('shows the owner the order with an ETag, and amountDetail only when asked', async () => {
    const { order } = await newOrder(alice.token, 1);
    const plain = await call('GET', `/orders/${order.id}`, { token: alice.token });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('etag')).toBe('"1"');
    expect('amountDetail' in plain.body).toBe(false);
    const detailed = await call('GET', `/orders/${order.id}?include=amountDetail`, { token: alice.token });
    expect(detailed.body.amountDetail).toEqual({ supply: 10_909, vat: 1_091, total: 12_000 });
  });

  it('answers a path id that is no id as the order or item not found (404)', async () => {
    const item = await call('GET', '/order-items/not-an-id', { token: alice.token });
    expect([item.status, item.body.code, item.body.message]).toEqual([404, 'NOT_FOUND', 'Order item not found.']);
    expect((await call('GET', '/orders/not-an-id/items', { token: alice.token })).body.message).toBe('Order not found.');
  });

  it("hides another customer's order, items, shipment and cancellation behind 404; admins see them", async () => {
    const { order } = await newOrder(alice.token);
    for (const suffix of ['', '/items', '/shipment', '/cancellation']) {
      const res = await call('GET', `/orders/${order.id}${suffix}`, { token: bob.token });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    expect((await call('GET', `/order-items/${order.items[0].id}`, { token: bob.token })).status).toBe(404);
    expect((await call('PATCH', `/orders/${order.id}`, { token: bob.token, body: { status: 'CANCELED' } })).status).toBe(404);
    expect((await call('GET', `/orders/${order.id}`, { token: admin })).status).toBe(200);
  });

  it('answers 400 for an unknown query parameter or include value', async () => {
    const { order } = await newOrder();
    expect((await call('GET', `/orders/${order.id}?expand=items`, { token: alice.token })).body.errors[0].code).toBe('UNKNOWN_PARAMETER');
    expect((await call('GET', `/orders/${order.id}?include=everything`, { token: alice.token })).status).toBe(422);
  });
});

describe('GET /orders and POST /orders/search', () => {
  let shopper: { token: string; userId: string };
  let placed: { id: string; amount: number }[];

  beforeEach(async () => {
    shopper = await tokenFor(JWT_SECRET);
    placed = [];
    const lamp = stocked(1000, { price: 59_000, name: 'Desk Lamp' });
    const cable = stocked(1000, { price: 15_900, name: 'USB-C Cable' });
    for (let i = 0; i < 6; i++) {
      const res = await placeOrder(shopper.token, { items: [{ productId: i % 2 ? lamp.id : cable.id, quantity: i + 1 }], ...(i % 3 === 0 ? { couponCode: 'SAVE-5' } : {}) });
      placed.push({ id: res.body.id, amount: res.body.amount });
    }
    await call('PATCH', `/orders/${placed[0].id}`, { token: shopper.token, body: { status: 'CANCELED' } });
  });

  const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((order) => order.id);

  it('lists only the caller\'s orders, newest first, with totals on request', async () => {
    const res = await call('GET', '/orders?withTotal=true', { token: shopper.token });
    expect(res.status).toBe(200);
    expect(res.body.totalCount).toBe(6);
    expect(ids(res)).toEqual([...placed].reverse().map((order) => order.id));
    expect(res.body).toMatchObject({ hasNext: false, nextCursor: null });
  });

  it('filters by status, coupon, amount, product name and date', async () => {
    expect(ids(await call('GET', '/orders?status=CANCELED', { token: shopper.token }))).toEqual([placed[0].id]);
    expect(ids(await call('GET', '/orders?status=PENDING,CANCELED&withTotal=true', { token: shopper.token })).length).toBe(6);
    expect(ids(await call('GET', '/orders?hasCoupon=true', { token: shopper.token })).sort()).toEqual([placed[0].id, placed[3].id].sort());
    const big = await call('GET', '/orders?minAmount=100000', { token: shopper.token });
    expect(big.body.items.every((order: { amount: number }) => order.amount >= 100_000)).toBe(true);
    expect(ids(await call('GET', '/orders?q=lamp', { token: shopper.token })).sort()).toEqual([placed[1].id, placed[3].id, placed[5].id].sort());
    const today = new Date().toISOString().slice(0, 10);
    expect((await call('GET', `/orders?from=${today}&to=${today}&withTotal=true`, { token: shopper.token })).body.totalCount).toBe(6);
    expect((await call('GET', '/orders?to=2001-01-01&withTotal=true', { token: shopper.token })).body.totalCount).toBe(0);
  });

  it('sorts by amount and walks pages with cursors, page and offset alike', async () => {
    const sorted = [...placed].sort((a, b) => b.amount - a.amount || (a.id < b.id ? 1 : -1)).map((order) => order.id);
    const walked: string[] = [];
    let cursor: string | null = null;
    do {
      const next: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const res = await call('GET', `/orders?sort=amount,desc&size=4${next}`, { token: shopper.token });
      walked.push(...ids(res));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(walked).toEqual(sorted);
    expect(ids(await call('GET', '/orders?sort=-amount&page=2&size=4', { token: shopper.token }))).toEqual(sorted.slice(4));
    expect(ids(await call('GET', '/orders?sort=-amount&offset=1&limit=2', { token: shopper.token }))).toEqual(sorted.slice(1, 3));
  });

  it('reads a parameter sent empty (`size=`) as one not sent, every one alike; an unknown one stays 400', async () => {
    const plain = await call('GET', '/orders?withTotal=true', { token: shopper.token });
    const empty = await call('GET', '/orders?withTotal=true&size=&sort=&cursor=&page=&offset=&status=&q=&from=&to=&userId=&minAmount=&hasCoupon=', { token: shopper.token });
    expect([empty.status, ids(empty), empty.body.totalCount]).toEqual([200, ids(plain), plain.body.totalCount]);
    expect(ids(await call('GET', '/orders?limit=&size=2', { token: shopper.token }))).toEqual(ids(plain).slice(0, 2));
    expect((await call('GET', '/orders?color=', { token: shopper.token })).body.errors[0]).toMatchObject({ field: 'color', code: 'UNKNOWN_PARAMETER' });
  });

  it('refuses a comma list with an empty member (`status=A,,B`) with 400 naming its place, not as a shorter list', async () => {
    for (const status of ['PENDING,,CANCELED', 'PENDING,']) {
      const res = await call('GET', `/orders?status=${status}`, { token: shopper.token });
      expect([res.status, res.body.code, res.body.errors]).toEqual([400, 'VALIDATION_FAILED', [{ field: 'status[1]', code: 'REQUIRED', message: expect.any(String) }]]);
    }
  });

  it('refuses an unknown parameter, a sort outside the allow-list, a forged cursor and mixed paging with 400', async () => {
    expect((await call('GET', '/orders?color=red', { token: shopper.token })).body.errors[0]).toMatchObject({ field: 'color', code: 'UNKNOWN_PARAMETER' });
    expect((await call('GET', '/orders?sort=userId', { token: shopper.token })).status).toBe(400);
    const forged = await call('GET', '/orders?cursor=bm9wZQ.bm9wZQ', { token: shopper.token });
    expect(forged.status).toBe(400);
    expect(forged.body.code).toBe('INVALID_CURSOR');
    const first = await call('GET', '/orders?size=2', { token: shopper.token });
    const foreign = await call('GET', `/orders?size=2&status=PENDING&cursor=${encodeURIComponent(first.body.nextCursor)}`, { token: shopper.token });
    expect(foreign.body.code).toBe('INVALID_CURSOR');
    expect((await call('GET', '/orders?page=1&cursor=x', { token: shopper.token })).status).toBe(400);
  });

  it('answers 403 when a customer names another user and lets an admin filter by user', async () => {
    expect((await call('GET', `/orders?userId=${alice.userId}`, { token: shopper.token })).status).toBe(403);
    expect((await call('GET', `/orders?userId=${shopper.userId}&withTotal=true`, { token: shopper.token })).body.totalCount).toBe(6);
    expect((await call('GET', `/orders?userId=${shopper.userId}&withTotal=true`, { token: admin })).body.totalCount).toBe(6);
  });

  it('answers 422 OUT_OF_RANGE, never a 5xx, for numbers past a 32-bit integer in the query and in a search body', async () => {
    for (const [name, value] of [['minAmount', '2147483648'], ['minAmount', '-2147483649'], ['minAmount', '99999999999999999999'], ['size', '2147483648'], ['page', '2147483648'], ['offset', '2147483648'], ['limit', '2147483648']]) {
      const res = await call('GET', `/orders?${name}=${value}`, { token: shopper.token });
      expect([name, value, res.status, res.body.errors]).toEqual([name, value, 422, [expect.objectContaining({ field: name, code: 'OUT_OF_RANGE' })]]);
    }
    for (const [name, value] of [['minAmount', 2 ** 31], ['minAmount', -(2 ** 31) - 1], ['minAmount', 1e300], ['size', 2 ** 31], ['page', 2 ** 53], ['offset', 2 ** 31]]) {
      const res = await call('POST', '/orders/search', { token: shopper.token, body: { [name]: value } });
      expect([name, value, [400, 422].includes(res.status), res.body.errors?.[0]?.field]).toEqual([name, value, true, name]);
    }
    for (const [name, value] of [['page', '2147483647'], ['offset', '2147483647'], ['minAmount', '2147483647'], ['minAmount', '-2147483648']]) {
      expect([name, value, (await call('GET', `/orders?${name}=${value}`, { token: shopper.token })).status]).toEqual([name, value, 200]);
    }
  });

  it('reads a day of year 0000 (ISO 8601 has one, the database none) as before every order, never a 5xx', async () => {
    const all = await call('GET', '/orders?from=0000-01-01&to=9999-12-31', { token: shopper.token });
    expect([all.status, ids(all).length]).toEqual([200, 6]);
    const none = await call('GET', '/orders?to=0000-01-01', { token: shopper.token });
    expect([none.status, ids(none)]).toEqual([200, []]);
    const searched = await call('POST', '/orders/search', { token: shopper.token, body: { from: '0000-02-29', to: '0000-12-31' } });
    expect([searched.status, ids(searched)]).toEqual([200, []]);
  });

  it('reads a status named many times as named once: a search body repeating it 40,000 times answers as one', async () => {
    // More than the 32,767 parameters a PostgreSQL statement takes, were each one a parameter.
    const res = await call('POST', '/orders/search', { token: shopper.token, body: { status: Array(40_000).fill('CANCELED') } });
    expect([res.status, ids(res)]).toEqual([200, [placed[0].id]]);
  });

  it('caps size at 100', async () => {
    const many = await tokenFor(JWT_SECRET);
    await database.prisma.order.createMany({
      data: Array.from({ length: 105 }, (_, i) => ({ id: `01a20000-0000-7000-8000-${String(i).padStart(12, '0')}`, userId: many.userId, amount: 1000, currency: 'KRW', reservationKey: `bulk-${i}` })),
    });
    const res = await call('GET', '/orders?size=1000&withTotal=true', { token: many.token });
    expect(res.body.items).toHaveLength(100);
    expect(res.body).toMatchObject({ hasNext: true, totalCount: 105 });
  });

  it('finds an order by the names of the items a PUT gave it, no longer by those it replaced', async () => {
    const organizer = stocked(100, { price: 21_000, name: 'Walnut Desk Organizer' });
    await call('PUT', `/orders/${placed[2].id}`, { token: shopper.token, body: { items: [{ productId: organizer.id, quantity: 1 }] } });
    expect(ids(await call('GET', '/orders?q=WALNUT%20desk', { token: shopper.token }))).toEqual([placed[2].id]);
    expect(ids(await call('GET', '/orders?q=usb-c', { token: shopper.token })).sort()).toEqual([placed[0].id, placed[4].id].sort());
  });

  it('walks the pages of a q search with cursors, page and offset, in either sort', async () => {
    const lamps = [placed[1], placed[3], placed[5]];
    const walk = async (query: string) => {
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { items: { id: string }[]; nextCursor: string | null } } = await call('GET', `/orders?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: shopper.token });
        walked.push(...ids(res));
        cursor = res.body.nextCursor;
      } while (cursor);
      return walked;
    };
    expect(await walk('q=lamp&size=1')).toEqual([...lamps].reverse().map((order) => order.id));
    const byAmount = [...lamps].sort((a, b) => a.amount - b.amount || (a.id < b.id ? -1 : 1)).map((order) => order.id);
    expect(await walk('q=LA&size=2&sort=amount')).toEqual(byAmount);
    expect(ids(await call('GET', '/orders?q=lamp&sort=-amount&page=2&size=2', { token: shopper.token }))).toEqual([byAmount[0]]);
    expect(ids(await call('GET', '/orders?q=lamp&offset=1&limit=1', { token: shopper.token }))).toEqual([lamps[1].id]);
  });

  it('pages a q search with several statuses, each order once, in sort order, without the statuses between them', async () => {
    // Lamps: [1] CANCELED, [3] PENDING, [5] CONFIRMED (between PENDING and CANCELED in the status order).
    await call('PATCH', `/orders/${placed[1].id}`, { token: shopper.token, body: { status: 'CANCELED' } });
    expect((await call('PATCH', `/orders/${placed[5].id}`, { token: admin, body: { status: 'CONFIRMED' } })).body.status).toBe('CONFIRMED');
    const wanted = [placed[1], placed[3]];
    const walk = async (query: string) => {
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const res: { body: { items: { id: string }[]; nextCursor: string | null } } = await call('GET', `/orders?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: shopper.token });
        walked.push(...ids(res));
        cursor = res.body.nextCursor;
      } while (cursor);
      return walked;
    };
    const newest = [...wanted].reverse().map((order) => order.id);
    const byAmount = [...wanted].sort((a, b) => b.amount - a.amount || (a.id < b.id ? 1 : -1)).map((order) => order.id);
    expect(await walk('q=lamp&status=CANCELED,PENDING&size=1')).toEqual(newest);
    expect(await walk('q=LA&status=PENDING,CANCELED&sort=-amount&size=1')).toEqual(byAmount);
    expect(ids(await call('GET', '/orders?q=lamp&status=PENDING,CANCELED,CONFIRMED&size=100', { token: shopper.token }))).toEqual([placed[5].id, ...newest]);
    // A status named twice is still one condition: each order once, and no page after the last.
    const search = { q: 'lamp', status: ['CANCELED', 'PENDING', 'CANCELED'], sort: '-amount', size: 1, withTotal: true };
    const first = await call('POST', '/orders/search', { token: shopper.token, body: search });
    expect([ids(first), first.body.hasNext, first.body.totalCount]).toEqual([[byAmount[0]], true, 2]);
    const last = await call('POST', '/orders/search', { token: shopper.token, body: { ...search, cursor: first.body.nextCursor } });
    expect([ids(last), last.body.hasNext, last.body.nextCursor]).toEqual([[byAmount[1]], false, null]);
    // A client that sends back the nextCursor it holds starts with null: the first page, as with none.
    const fromNull = await call('POST', '/orders/search', { token: shopper.token, body: { ...search, cursor: null } });
    expect([fromNull.status, ids(fromNull), fromNull.body.nextCursor]).toEqual([200, [byAmount[0]], first.body.nextCursor]);
  });

  it('matches keywords of one or two characters, and punctuation and wildcards as plain characters', async () => {
    const odd = stocked(100, { price: 1_000, name: 'Tape 50%_off (A-4)' });
    await call('PUT', `/orders/${placed[4].id}`, { token: shopper.token, body: { items: [{ productId: odd.id, quantity: 1 }] } });
    const search = async (q: string) => ids(await call('GET', `/orders?q=${encodeURIComponent(q)}`, { token: shopper.token })).sort();
    expect(await search('LA')).toEqual([placed[1].id, placed[3].id, placed[5].id].sort());
    expect(await search('b')).toEqual([placed[0].id, placed[2].id].sort());
    expect(await search('%')).toEqual([placed[4].id]);
    expect(await search('%_')).toEqual([placed[4].id]);
    expect(await search('a-4')).toEqual([placed[4].id]);
    expect(await search('(a-4)')).toEqual([placed[4].id]);
    expect(await search('a_4')).toEqual([]);
    expect(await search('zq')).toEqual([]);
    expect(await search('l%p')).toEqual([]);
  });

  it('counts exactly up to 1,000 orders and, past that, answers an estimate flagged by Total-Count-Estimated', async () => {
    const busy = await tokenFor(JWT_SECRET);
    await database.prisma.$executeRawUnsafe(
      `INSERT INTO orders (id, user_id, amount, currency, reservation_key, updated_at, product_names)
       SELECT gen_random_uuid(), $1::uuid, 1000, 'KRW', 'busy-' || g, now(), 'Desk Lamp' FROM generate_series(1, 1050) AS g`,
      busy.userId,
    );
    const estimated = await call('GET', '/orders?withTotal=true&size=1', { token: busy.token });
    expect(estimated.status).toBe(200);
    expect(estimated.body.totalCount).toBeGreaterThan(1_000);
    expect(estimated.headers.get('total-count-estimated')).toBe('true');
    const exact = await call('GET', '/orders?withTotal=true&size=1', { token: shopper.token });
    expect(exact.body.totalCount).toBe(6);
    expect(exact.headers.get('total-count-estimated')).toBeNull();
  });

  it('takes the same conditions in a POST /orders/search body, plus ids', async () => {
    const res = await call('POST', '/orders/search', { token: shopper.token, body: { status: ['PENDING'], hasCoupon: true, ids: placed.map((order) => order.id), withTotal: true } });
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual([placed[3].id]);
    expect(res.body.totalCount).toBe(1);
    const bad = await call('POST', '/orders/search', { token: shopper.token, body: { status: 'PENDING', color: 'red' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['color', 'status']);
  });
});

describe('status changes', () => {
  it('cancels a PENDING order and gives its stock back; a repeat cancel is 409 ORDER_ALREADY_CANCELED', async () => {
    const { order, product } = await newOrder(alice.token, 3);
    expect(inventory.stock.get(product.sku)).toBe(97);
    const res = await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { status: 'CANCELED' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'CANCELED', canceledAt: expect.any(String) });
    expect(res.headers.get('etag')).toBe('"2"');
    expect(inventory.stock.get(product.sku)).toBe(100);
    const again = await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { status: 'CANCELED' } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('ORDER_ALREADY_CANCELED');
  });

  it('writes nothing for a PATCH that changes nothing: the ETag others hold stays, If-Match is still checked', async () => {
    const { order } = await newOrder(alice.token, 1, { couponCode: 'SAME-1' });
    for (const body of [{}, { status: 'PENDING' }, { couponCode: 'SAME-1' }, { status: 'PENDING', couponCode: 'SAME-1' }]) {
      const res = await call('PATCH', `/orders/${order.id}`, { token: alice.token, body });
      expect([res.status, res.headers.get('etag'), res.body.updatedAt]).toEqual([200, '"1"', order.updatedAt]);
    }
    const stale = await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: {}, headers: { 'if-match': '"7"' } });
    expect([stale.status, stale.body.code]).toEqual([412, 'PRECONDITION_FAILED']);
    expect((await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { couponCode: 'OTHER-1' } })).headers.get('etag')).toBe('"2"');
  });

  it('moves an order through CONFIRMED, SHIPPED and DELIVERED (admin); cancel after shipping is 409 ORDER_NOT_CANCELABLE', async () => {
    const { order } = await newOrder();
    expect((await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { status: 'CONFIRMED' } })).status).toBe(403);
    expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'SHIPPED' } })).body.code).toBe('CONFLICT');
    expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'CONFIRMED' } })).body.status).toBe('CONFIRMED');
    expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'SHIPPED' } })).body.status).toBe('SHIPPED');
    // Statuses on both sides of SHIPPED (the list is also sent as the range it spans): not it.
    const around = await call('POST', '/orders/search', { token: admin, body: { ids: [order.id], status: ['PENDING', 'DELIVERED'], withTotal: true } });
    expect(around.body).toMatchObject({ items: [], totalCount: 0 });
    const spanning = await call('POST', '/orders/search', { token: admin, body: { ids: [order.id], status: ['CONFIRMED', 'CANCELED'], withTotal: true } });
    expect(spanning.body).toMatchObject({ items: [], totalCount: 0 });
    const including = await call('POST', '/orders/search', { token: admin, body: { ids: [order.id], status: ['SHIPPED', 'PENDING'], withTotal: true } });
    expect(including.body).toMatchObject({ items: [{ id: order.id }], totalCount: 1 });
    const cancel = await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { status: 'CANCELED' } });
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('ORDER_NOT_CANCELABLE');
    expect((await call('POST', `/orders/${order.id}/cancellation`, { token: alice.token })).body.code).toBe('ORDER_NOT_CANCELABLE');
    expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'DELIVERED' } })).body.status).toBe('DELIVERED');
    expect((await call('GET', `/orders/${order.id}/shipment`, { token: alice.token })).body).toMatchObject({ status: 'DELIVERED', shippedAt: expect.any(String) });
  });

  // The life cycle as a client meets it: every status a PATCH can ask for, from every status an
  // order can be in, asked by an admin (who may make every move). 200 with the status it asked
  // for, or 409 with the code, the order left as it was.
  const answers: Record<OrderStatus, Record<OrderStatus, 'OK' | 'CONFLICT' | 'ORDER_NOT_CANCELABLE' | 'ORDER_ALREADY_CANCELED'>> = {
    PENDING: { PENDING: 'OK', CONFIRMED: 'OK', SHIPPED: 'CONFLICT', DELIVERED: 'CONFLICT', CANCELED: 'OK' },
    CONFIRMED: { PENDING: 'CONFLICT', CONFIRMED: 'OK', SHIPPED: 'OK', DELIVERED: 'CONFLICT', CANCELED: 'OK' },
    SHIPPED: { PENDING: 'CONFLICT', CONFIRMED: 'CONFLICT', SHIPPED: 'OK', DELIVERED: 'OK', CANCELED: 'ORDER_NOT_CANCELABLE' },
    DELIVERED: { PENDING: 'CONFLICT', CONFIRMED: 'CONFLICT', SHIPPED: 'CONFLICT', DELIVERED: 'OK', CANCELED: 'ORDER_NOT_CANCELABLE' },
    CANCELED: { PENDING: 'CONFLICT', CONFIRMED: 'CONFLICT', SHIPPED: 'CONFLICT', DELIVERED: 'CONFLICT', CANCELED: 'ORDER_ALREADY_CANCELED' },
  };
  const pathTo: Record<OrderStatus, OrderStatus[]> = { PENDING: [], CONFIRMED: ['CONFIRMED'], SHIPPED: ['CONFIRMED', 'SHIPPED'], DELIVERED: ['CONFIRMED', 'SHIPPED', 'DELIVERED'], CANCELED: ['CANCELED'] };

  it.each(Object.keys(answers) as OrderStatus[])('answers a PATCH of each status to a %s order as the life cycle allows', async (from) => {
    const seen: Record<string, string> = {};
    for (const to of Object.keys(answers[from]) as OrderStatus[]) {
      const { order } = await newOrder();
      for (const step of pathTo[from]) expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: step } })).status).toBe(200);
      const res = await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: to } });
      const now = (await call('GET', `/orders/${order.id}`, { token: admin })).body.status;
      seen[to] = res.status === 200 && res.body.status === to && now === to ? 'OK' : res.status === 409 && now === from ? res.body.code : `${res.status} ${res.body.code ?? res.body.status}, now ${now}`;
    }
    expect(seen).toEqual(answers[from]);
  });

  it('answers 412 when If-Match is stale on PATCH, PUT and DELETE', async () => {
    const { order, product } = await newOrder();
    const stale = { 'if-match': '"9"' };
    expect((await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { status: 'CANCELED' }, headers: stale })).status).toBe(412);
    expect((await call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: product.id, quantity: 1 }] }, headers: stale })).status).toBe(412);
    expect((await call('DELETE', `/orders/${order.id}`, { token: alice.token, headers: stale })).status).toBe(412);
    expect((await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { couponCode: 'LATE-1' }, headers: { 'if-match': '"1"' } })).status).toBe(200);
  });
});

describe('PUT /orders/{id}', () => {
  it('replaces the items while PENDING: re-prices, re-reserves and clears a coupon not sent', async () => {
    const { order, product } = await newOrder(alice.token, 2, { couponCode: 'KEEP-1' });
    const other = stocked(10, { price: 5_000 });
    const res = await call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: other.id, quantity: 3 }] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ amount: 15_000, couponCode: null, hasCoupon: false, productId: other.id });
    expect(res.body.items).toHaveLength(1);
    expect(inventory.stock.get(product.sku)).toBe(100);
    expect(inventory.stock.get(other.sku)).toBe(7);
  });

  it('lowers a quantity when the product has no spare stock, and gives back the unit no longer ordered', async () => {
    const product = stocked(2);
    const other = stocked(1);
    const order = (await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 2 }, { productId: other.id, quantity: 1 }] })).body;
    expect([inventory.stock.get(product.sku), inventory.stock.get(other.sku)]).toEqual([0, 0]);
    const res = await call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: product.id, quantity: 1 }] } });
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([expect.objectContaining({ productId: product.id, quantity: 1 })]);
    expect([inventory.stock.get(product.sku), inventory.held(product.sku)]).toEqual([1, 1]);
    expect([inventory.stock.get(other.sku), inventory.held(other.sku)]).toEqual([1, 0]);
  });

  it('leaves the order holding its units when a PUT loses its race to another write', async () => {
    const product = stocked(2);
    const order = (await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 2 }] })).body;
    inventory.delayMs = 50; // the PUT's reservation is slower than a PATCH, which wins the order's version meanwhile
    try {
      const [replaced, patched] = await Promise.all([
        call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: product.id, quantity: 1 }] }, headers: { 'if-match': '"1"' } }),
        call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { couponCode: 'FIRST-1' } }),
      ]);
      expect([replaced.status, patched.status]).toEqual([412, 200]);
    } finally {
      inventory.delayMs = 0;
    }
    expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).body.items).toEqual([expect.objectContaining({ productId: product.id, quantity: 2 })]);
    expect([inventory.stock.get(product.sku), inventory.held(product.sku)]).toEqual([0, 2]);
    // And gives both back when it goes.
    expect((await call('DELETE', `/orders/${order.id}`, { token: alice.token })).status).toBe(204);
    expect([inventory.stock.get(product.sku), inventory.held(product.sku)]).toEqual([2, 0]);
  });

  it('answers 409 CONFLICT, not OUT_OF_STOCK, to the PUT that loses to a concurrent PUT lowering the same order', async () => {
    const product = stocked(2);
    const order = (await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 2 }] })).body;
    inventory.delayMs = 50; // both PUTs read the order before either reservation answers
    try {
      const puts = await Promise.all(
        [1, 1].map((quantity) => call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: product.id, quantity }] } })),
      );
      expect(puts.map((res) => res.status).sort()).toEqual([200, 409]);
      expect(puts.find((res) => res.status === 409)!.body.code).toBe('CONFLICT');
      // With If-Match, the loser is told its version is stale (nothing spare again).
      inventory.stock.set(product.sku, 0);
      const etag = (await call('GET', `/orders/${order.id}`, { token: alice.token })).headers.get('etag')!;
      const conditional = await Promise.all(
        [1, 1].map(() => call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: product.id, quantity: 1 }] }, headers: { 'if-match': etag } })),
      );
      expect(conditional.map((res) => res.status).sort()).toEqual([200, 412]);
    } finally {
      inventory.delayMs = 0;
    }
    expect([inventory.stock.get(product.sku), inventory.held(product.sku)]).toEqual([0, 1]);
  });

  it('answers 409 ORDER_NOT_EDITABLE once the order left PENDING, and 409 OUT_OF_STOCK without touching the order', async () => {
    const { order, product } = await newOrder();
    const scarce = stocked(1);
    const refused = await call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: scarce.id, quantity: 5 }] } });
    expect(refused.body.code).toBe('OUT_OF_STOCK');
    expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).body.items[0].productId).toBe(product.id);
    await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'CONFIRMED' } });
    const res = await call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: product.id, quantity: 1 }] } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('ORDER_NOT_EDITABLE');
  });
});

describe('DELETE /orders/{id}', () => {
  it('answers 204 with no body, returns the stock, and 404 the second time', async () => {
    const { order, product } = await newOrder(alice.token, 5);
    const res = await call('DELETE', `/orders/${order.id}`, { token: alice.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(inventory.stock.get(product.sku)).toBe(100);
    expect((await call('DELETE', `/orders/${order.id}`, { token: alice.token })).status).toBe(404);
    expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).status).toBe(404);
  });

  it('gives stock back only with the deletion: a delete that loses to another write leaves the order holding its stock', async () => {
    const product = stocked(10);
    const orders: { id: string }[] = [];
    for (let n = 0; n < 10; n++) orders.push((await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 1 }] })).body);
    expect(inventory.stock.get(product.sku)).toBe(0);
    inventory.releaseDelayMs = 50; // a Release slower than a PATCH: whatever the delete does before its own write, the PATCH can win meanwhile
    // Each delete races a change of the same order, as a customer's two tabs would.
    const outcomes = await Promise.all(
      orders.map(async (order, n) => {
        const [deleted, patched] = await Promise.all([call('DELETE', `/orders/${order.id}`, { token: alice.token }), call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { couponCode: `RACE-${n}` } })]);
        return { deleted: deleted.status, patched: patched.status };
      }),
    );
    for (const { deleted, patched } of outcomes) {
      expect([204, 409]).toContain(deleted);
      expect([200, 404, 409]).toContain(patched);
    }
    const left = (await Promise.all(orders.map((order) => call('GET', `/orders/${order.id}`, { token: alice.token })))).filter((res) => res.status === 200);
    expect(left.length).toBe(outcomes.filter((outcome) => outcome.deleted !== 204).length);
    for (const res of left) expect(res.body.status).toBe('PENDING');
    // Every order left still holds its one unit; every deleted one gave its unit back.
    await until(() => inventory.stock.get(product.sku) === 10 - left.length);
    expect(inventory.stock.get(product.sku)).toBe(10 - left.length);
  });

  it('gives nothing back for a shipped or delivered order: its units have left the warehouse', async () => {
    for (const shipment of ['SHIPPED', 'DELIVERED']) {
      const { order, product } = await newOrder(alice.token, 3);
      expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'CONFIRMED' } })).status).toBe(200);
      expect((await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'SHIPPED' } })).status).toBe(200);
      if (shipment === 'DELIVERED') expect((await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'DELIVERED' } })).status).toBe(200);
      expect((await call('DELETE', `/orders/${order.id}`, { token: alice.token })).status).toBe(204);
      expect(inventory.stock.get(product.sku)).toBe(97);
      expect(await database.prisma.pendingRelease.count({ where: { reservationKey: order.id } })).toBe(0);
    }
  });
});

describe('items and shipments', () => {
  it('lists an order\'s items and reads one by its global id', async () => {
    const a = stocked(10);
    const b = stocked(10);
    const placed = await placeOrder(alice.token, { items: [{ productId: a.id, quantity: 1 }, { productId: b.id, quantity: 2 }] });
    const items = await call('GET', `/orders/${placed.body.id}/items?size=1&withTotal=true`, { token: alice.token });
    expect(items.body).toMatchObject({ totalCount: 2, hasNext: true });
    const rest = await call('GET', `/orders/${placed.body.id}/items?size=1&cursor=${encodeURIComponent(items.body.nextCursor)}`, { token: alice.token });
    expect([...items.body.items, ...rest.body.items].map((item: { productId: string }) => item.productId)).toEqual([a.id, b.id]);
    const one = await call('GET', `/order-items/${placed.body.items[1].id}`, { token: alice.token });
    expect(one.body).toEqual(placed.body.items[1]);
  });

  it('lets an admin set the shipment; SHIPPED moves the order; customers get 403', async () => {
    const { order } = await newOrder();
    expect((await call('GET', `/orders/${order.id}/shipment`, { token: alice.token })).body).toEqual({ orderId: order.id, status: 'PREPARING', carrier: null, trackingNumber: null, shippedAt: null });
    expect((await call('PUT', `/orders/${order.id}/shipment`, { token: alice.token, body: { status: 'SHIPPED' } })).status).toBe(403);
    await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'CONFIRMED' } });
    const shipped = await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'SHIPPED', carrier: 'CJ Logistics', trackingNumber: '1234-5678' } });
    expect(shipped.status).toBe(200);
    expect(shipped.body).toMatchObject({ status: 'SHIPPED', carrier: 'CJ Logistics', trackingNumber: '1234-5678', shippedAt: expect.any(String) });
    expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).body.status).toBe('SHIPPED');
  });
});

describe('shipping an order', () => {
  it('tells inventory its stock left the warehouse, whether shipped by PUT .../shipment or PATCH status', async () => {
    for (const ship of ['shipment', 'status']) {
      const { order, product } = await newOrder(alice.token, 2);
      expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'CONFIRMED' } })).status).toBe(200);
      expect(inventory.fulfilled.has(order.id)).toBe(false);
      const shipped =
        ship === 'shipment'
          ? await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'SHIPPED' } })
          : await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'SHIPPED' } });
      expect(shipped.status).toBe(200);
      expect(inventory.fulfilled.has(order.id)).toBe(true);
      expect(inventory.reservations.has(order.id)).toBe(false); // nothing left for a Release to give back
      expect(inventory.stock.get(product.sku)).toBe(98);
      expect(await database.prisma.pendingRelease.count({ where: { reservationKey: order.id } })).toBe(0);
    }
  });

  it('ships one way by either door: PATCH status after PUT .../shipment keeps the carrier, records the event and honours If-Match', async () => {
    const { order } = await newOrder(alice.token, 1);
    await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'CONFIRMED' } });
    const prepared = await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'PREPARING', carrier: 'CJ', trackingNumber: 'T-77' } });
    expect(prepared.status).toBe(200);
    const version = Number(JSON.parse((await call('GET', `/orders/${order.id}`, { token: admin })).headers.get('etag') ?? '"0"'));
    expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'SHIPPED' }, headers: { 'if-match': `"${version - 1}"` } })).status).toBe(412);
    const shipped = await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'SHIPPED' }, headers: { 'if-match': `"${version}"` } });
    expect([shipped.status, shipped.body.status]).toEqual([200, 'SHIPPED']);
    const shipment = await call('GET', `/orders/${order.id}/shipment`, { token: admin });
    expect(shipment.body).toMatchObject({ status: 'SHIPPED', carrier: 'CJ', trackingNumber: 'T-77', shippedAt: expect.any(String) });
    expect(await database.prisma.outboxEvent.count({ where: { type: 'order.shipped', aggregateId: order.id } })).toBe(1);
  });

  it('guards PUT .../shipment with If-Match against the ETag its GET returns: a carrier changed meanwhile is 412, never overwritten', async () => {
    const { order } = await newOrder(alice.token, 1);
    const read = await call('GET', `/orders/${order.id}/shipment`, { token: admin });
    const etag = read.headers.get('etag');
    expect(etag).toMatch(/^"\d+"$/);
    const first = await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'PREPARING', carrier: 'CJ', trackingNumber: 'T-1' }, headers: { 'if-match': etag! } });
    expect([first.status, first.headers.get('etag')]).toEqual([200, expect.not.stringMatching(`^${etag}$`)]);
    // A second admin who read the shipment before the first wrote it.
    const stale = await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'PREPARING', carrier: 'Hanjin', trackingNumber: 'T-2' }, headers: { 'if-match': etag! } });
    expect([stale.status, stale.body.code]).toEqual([412, 'PRECONDITION_FAILED']);
    expect((await call('GET', `/orders/${order.id}/shipment`, { token: admin })).body).toMatchObject({ carrier: 'CJ', trackingNumber: 'T-1' });
    const current = await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'PREPARING', carrier: 'Hanjin', trackingNumber: 'T-2' }, headers: { 'if-match': first.headers.get('etag')! } });
    expect([current.status, current.body.carrier]).toEqual([200, 'Hanjin']);
  });

  it('writes nothing for a PUT .../shipment that changes nothing: the order\'s ETag others hold stays, If-Match is still checked', async () => {
    const { order } = await newOrder(alice.token, 1);
    const set = await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'PREPARING', carrier: 'CJ', trackingNumber: 'T-9' } });
    const etag = set.headers.get('etag');
    // A carrier's feed sending the same shipment again: the order's version, its ETag, stays.
    const again = await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'PREPARING', carrier: 'CJ', trackingNumber: 'T-9' } });
    expect([again.status, again.headers.get('etag'), again.body.trackingNumber]).toEqual([200, etag, 'T-9']);
    expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).headers.get('etag')).toBe(etag);
    const stale = await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'PREPARING', carrier: 'CJ', trackingNumber: 'T-9' }, headers: { 'if-match': '"99"' } });
    expect([stale.status, stale.body.code]).toEqual([412, 'PRECONDITION_FAILED']);
    // A new order's shipment is PREPARING with nothing set: sending that is no change either.
    const { order: fresh } = await newOrder(alice.token, 1);
    const freshEtag = (await call('GET', `/orders/${fresh.id}/shipment`, { token: admin })).headers.get('etag');
    expect((await call('PUT', `/orders/${fresh.id}/shipment`, { token: admin, body: { status: 'PREPARING' } })).headers.get('etag')).toBe(freshEtag);
  });

  it('keeps the fulfilment and retries it while inventory is down', async () => {
    const { order } = await newOrder(alice.token, 1);
    await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'CONFIRMED' } });
    inventory.refuseReleases = true;
    try {
      expect((await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'SHIPPED' } })).status).toBe(200);
      expect(await database.prisma.pendingRelease.findUnique({ where: { reservationKey: order.id } })).toMatchObject({ call: 'FULFIL' });
      expect(await built.orders.stock.retryPendingReleases({ graceMs: 0 })).toBe(0);
    } finally {
      inventory.refuseReleases = false;
    }
    expect(await built.orders.stock.retryPendingReleases({ graceMs: 0 })).toBeGreaterThanOrEqual(1);
    expect(inventory.fulfilled.has(order.id)).toBe(true);
    expect(await database.prisma.pendingRelease.count({ where: { reservationKey: order.id } })).toBe(0);
  });
});

describe('stock releases inventory cannot take right away', () => {
  it('are kept and retried until inventory takes them: a cancel and a failed order write leak nothing', async () => {
    const { order, product } = await newOrder(alice.token, 3);
    const doomed = stocked(5, { name: 'x'.repeat(300) }); // too long to store: the write fails after reserving
    const queuedBefore = await database.prisma.pendingRelease.count();
    inventory.refuseReleases = true;
    try {
      const canceled = await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { status: 'CANCELED' } });
      expect(canceled.status).toBe(200);
      expect(canceled.body.status).toBe('CANCELED');
      expect((await placeOrder(alice.token, { items: [{ productId: doomed.id, quantity: 2 }] })).status).toBe(500);
      expect(inventory.stock.get(product.sku)).toBe(97);
      expect(inventory.stock.get(doomed.sku)).toBe(3);
      expect(await database.prisma.pendingRelease.count()).toBe(queuedBefore + 2);
      expect(await pendingReleasesOnMetrics()).toBe(queuedBefore + 2); // what an operator's dashboard shows
      expect(await built.orders.stock.retryPendingReleases({ graceMs: 0 })).toBe(0); // still down: kept, attempt counted
      expect(await database.prisma.pendingRelease.count({ where: { attempts: { gt: 0 } } })).toBe(1);
    } finally {
      inventory.refuseReleases = false;
    }
    expect(await built.orders.stock.retryPendingReleases({ graceMs: 60_000 })).toBe(0); // too young to retry yet
    expect(await built.orders.stock.retryPendingReleases({ graceMs: 0 })).toBe(queuedBefore + 2);
    expect(inventory.stock.get(product.sku)).toBe(100);
    expect(inventory.stock.get(doomed.sku)).toBe(5);
    expect(await database.prisma.pendingRelease.count()).toBe(0);
    expect(await pendingReleasesOnMetrics()).toBe(0);
  });
});

/** orders_pending_stock_releases as Prometheus scrapes it from /metrics. */
async function pendingReleasesOnMetrics(): Promise<number> {
  const scraped = await call('GET', '/metrics');
  return Number(/^orders_pending_stock_releases(?:\{[^}]*\})? (\d+)$/m.exec(scraped.text)?.[1]);
}

describe('a placement that dies between Reserve and writing its order', () => {
  /** The fake catalog's products, without the caller's token a request would carry. */
  const catalogOf = (): Catalog => ({ productsByIds: async (ids) => new Map([...catalog.products].filter(([id]) => ids.includes(id))) });
  /** The process "crashes" where it matters: the order's transaction never runs. */
  class CrashBeforeCommit extends OrderRepository {
    override unitOfWork<T>(): Promise<T> {
      return new Promise<T>(() => undefined);
    }
  }
  /** The use cases as another process on the same database builds them, over `orders` and `gateway`. */
  const useCasesOver = (orders: OrderRepository, gateway: InventoryGateway = inventoryClient) =>
    createOrderUseCases({ orders, reservations: new ReservationLedger(database.prisma), catalog: catalogOf(), inventory: gateway, idempotency: new IdempotencyStore(database.prisma), cursorSecret: 'orders-cursor-secret', logger: createLogger('other-process', 'silent') });
  /** Alice, as a token verified now presents her. */
  const aliceNow = () => ({ userId: alice.userId, role: 'customer' as const, expiresAt: Math.floor(Date.now() / 1000) + 60 });

  it('gets its stock back once its deadline has passed, and not while it is live', async () => {
    const product = stocked(10);
    const crashing = useCasesOver(new CrashBeforeCommit(database.prisma));
    void crashing.placeOrder(aliceNow(), { items: [{ productId: product.id, quantity: 4 }] });
    await until(() => inventory.held(product.sku) > 0);
    expect(inventory.held(product.sku)).toBe(4);

    // A fresh process's sweeper (same database): the placement is still within its deadline.
    expect(await built.orders.stock.retryPendingReleases({ graceMs: 0 })).toBe(0);
    expect(inventory.stock.get(product.sku)).toBe(6);
    // Past the request deadline (5 s here) plus the margin, nobody will write the order: released.
    const later = new Date(Date.now() + 5_000 + PLACEMENT_MARGIN_MS + 1);
    expect(await built.orders.stock.retryPendingReleases({ graceMs: 0, now: later })).toBe(1);
    expect(inventory.stock.get(product.sku)).toBe(10);
    expect(inventory.held(product.sku)).toBe(0);
    expect(await database.prisma.order.count({ where: { items: { some: { productId: product.id } } } })).toBe(0);
    expect(await database.prisma.pendingRelease.count({ where: { placementDeadline: { not: null } } })).toBe(0);
  });

  it('a cancel that dies right after its commit still gives the stock back', async () => {
    const { order, product } = await newOrder(alice.token, 2);
    // The process dies between the cancel's commit and its Release: that call never returns.
    const dying: InventoryGateway = { ...inventoryClient, release: () => new Promise<number>(() => undefined) };
    const crashing = useCasesOver(new OrderRepository(database.prisma), dying);
    void crashing.changeOrder.patch(aliceNow(), order.id, { status: 'CANCELED' });
    await until(async () => (await database.prisma.order.findUnique({ where: { id: order.id } }))?.status === 'CANCELED');
    expect(inventory.held(product.sku)).toBe(2);
    expect(await built.orders.stock.retryPendingReleases({ graceMs: 0 })).toBe(1);
    expect(inventory.held(product.sku)).toBe(0);
    expect(inventory.stock.get(product.sku)).toBe(100);
  });

  /** Time passing for a key's claim: its creation and its end both `ms` earlier, as the clock moving on would leave them. */
  const ageKey = (key: string, ms: number) => database.prisma.$executeRaw`UPDATE idempotency_keys SET created_at = created_at - make_interval(secs => ${ms / 1000}), expires_at = expires_at - make_interval(secs => ${ms / 1000}) WHERE key = ${key}`;

  it("lets a retry take its Idempotency-Key over once the dead request's deadline and margin have passed, not a minute later", async () => {
    const product = stocked(10);
    const key = `died-${Date.now()}`;
    const input = { items: [{ productId: product.id, quantity: 1 }] };
    // The replica serving the first request dies (SIGKILL) after claiming the key: its order is never written.
    const crashing = useCasesOver(new CrashBeforeCommit(database.prisma));
    void crashing.placeOrder(aliceNow(), input, key);
    await until(() => inventory.held(product.sku) > 0);
    // Its deadline (5 s outside a request) and the margin have passed, well short of the longest budget a request may have (60 s).
    await ageKey(key, 5_000 + CLAIM_MARGIN_MS + 1_000);
    // The client's retry (a short budget: were the key still held, it would wait that long, then 409).
    const retry = await placeOrder(alice.token, input, { 'idempotency-key': key, 'x-request-timeout-ms': '2000' });
    expect([retry.status, retry.body.code]).toEqual([201, undefined]);
    expect(await database.prisma.order.count({ where: { items: { some: { productId: product.id } } } })).toBe(1);
    expect(await placeOrder(alice.token, input, { 'idempotency-key': key })).toMatchObject({ status: 201, body: { id: retry.body.id } });
    // The dead request's stock goes back as any dead placement's does; the retry's order holds its own.
    expect(await built.orders.stock.retryPendingReleases({ graceMs: 0, now: new Date(Date.now() + 10 * 60_000) })).toBe(1);
    expect(inventory.held(product.sku)).toBe(1);
  });

  it('lets a retry take over a claim written by the previous version (ended at the key\'s 24 hours) once no request could still hold it', async () => {
    const product = stocked(10);
    const key = `rollout-${Date.now()}`;
    const input = { items: [{ productId: product.id, quantity: 1 }] };
    // A replica of the previous version claimed the key and was stopped mid-request by the rollout.
    await database.prisma.idempotencyKey.create({ data: { userId: alice.userId, key, requestHash: requestHashOf(input), expiresAt: new Date(Date.now() + 24 * 60 * 60_000), createdAt: new Date(Date.now() - 61_000) } }); // a minute ago: longer than any request lives
    const retry = await placeOrder(alice.token, input, { 'idempotency-key': key, 'x-request-timeout-ms': '2000' });
    expect([retry.status, retry.body.code]).toEqual([201, undefined]);
  });

  it('keeps a key for a live request given a budget longer than a minute: a retry waits on it, and is not let take it over', async () => {
    const product = stocked(10);
    const key = `long-budget-${Date.now()}`;
    const input = { items: [{ productId: product.id, quantity: 1 }] };
    // A request of this version, given 120 s (a service allows six times its REQUEST_TIMEOUT_MS), claimed the key 61 s ago and still runs.
    await database.prisma.idempotencyKey.create({ data: { userId: alice.userId, key, requestHash: requestHashOf(input), expiresAt: new Date(Date.now() + 59_000 + CLAIM_MARGIN_MS), createdAt: new Date(Date.now() - 61_000) } });
    const retry = await placeOrder(alice.token, input, { 'idempotency-key': key, 'x-request-timeout-ms': '1500' });
    expect([retry.status, retry.body.code, retry.headers.get('retry-after')]).toEqual([409, 'CONFLICT', '1']);
    expect(await database.prisma.order.count({ where: { items: { some: { productId: product.id } } } })).toBe(0);
  });

  it('does not write a second order when the first request outlives its claim and a retry took the key over', async () => {
    const product = stocked(10);
    const key = `outlived-${Date.now()}`;
    const input = { items: [{ productId: product.id, quantity: 1 }] };
    let retried: Awaited<ReturnType<typeof placeOrder>> | undefined;
    const late = useCasesOver(
      new (class extends OrderRepository {
        // The first request stalls past its claim (and past the old fixed minute); the client's retry takes the key over and places the order.
        override async unitOfWork<T>(work: (writes: OrderWrites) => Promise<T>): Promise<T> {
          await ageKey(key, 61_000);
          retried = await placeOrder(alice.token, input, { 'idempotency-key': key });
          return super.unitOfWork(work);
        }
      })(database.prisma),
    );
    await expect(late.placeOrder(aliceNow(), input, key)).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });
    expect(retried?.status).toBe(201);
    // One order for the key, the retry's, and the stock the late request took went back.
    expect((await database.prisma.order.findMany({ where: { items: { some: { productId: product.id } } }, select: { id: true } })).map((order) => order.id)).toEqual([retried?.body.id]);
    expect(inventory.stock.get(product.sku)).toBe(9);
    expect(await placeOrder(alice.token, input, { 'idempotency-key': key })).toMatchObject({ status: 201, body: { id: retried?.body.id } });
  });

  it('cannot write its order once the sweeper has taken the placement over: 503, nothing kept', async () => {
    const product = stocked(10);
    const res = await placeOrder(alice.token, { items: [{ productId: product.id, quantity: 1 }] });
    expect(res.status).toBe(201);
    // Successful placements leave no intent behind.
    expect(await database.prisma.pendingRelease.count({ where: { placementDeadline: { not: null } } })).toBe(0);
    const late = useCasesOver(
      new (class extends OrderRepository {
        // The sweeper runs (the deadline passed) just before this placement's transaction.
        override async unitOfWork<T>(work: (writes: OrderWrites) => Promise<T>): Promise<T> {
          await built.orders.stock.retryPendingReleases({ graceMs: 0, now: new Date(Date.now() + 10 * 60_000) });
          return super.unitOfWork(work);
        }
      })(database.prisma),
    );
    await expect(late.placeOrder(aliceNow(), { items: [{ productId: product.id, quantity: 3 }] }, undefined)).rejects.toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(inventory.stock.get(product.sku)).toBe(9);
    expect(await database.prisma.order.count({ where: { items: { some: { productId: product.id } } } })).toBe(1);
  });
});

describe('POST /orders/{id}/cancellation', () => {
  it('accepts with 202 and a Location, then completes in the background with the refund', async () => {
    const { order, product } = await newOrder(alice.token, 2);
    const res = await call('POST', `/orders/${order.id}/cancellation`, { token: alice.token, body: { reason: 'changed my mind' } });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe(`/v1/orders/${order.id}/cancellation`);
    expect(res.body).toMatchObject({ orderId: order.id, reason: 'changed my mind', refundAmount: 24_000, createdAt: expect.any(String) });
    await until(async () => (await call('GET', `/orders/${order.id}/cancellation`, { token: alice.token })).body.status === 'COMPLETED');
    const done = await call('GET', `/orders/${order.id}/cancellation`, { token: alice.token });
    expect(done.body).toMatchObject({ status: 'COMPLETED', refundAmount: 24_000, completedAt: expect.any(String) });
    expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).body.status).toBe('CANCELED');
    expect(inventory.stock.get(product.sku)).toBe(100);
    expect((await call('POST', `/orders/${order.id}/cancellation`, { token: alice.token })).body.id).toBe(res.body.id);
  });

  it('honours If-Match as the order\'s other writes do: a stale ETag is 412 and nothing is requested', async () => {
    const { order } = await newOrder(alice.token, 1);
    const stale = await call('POST', `/orders/${order.id}/cancellation`, { token: alice.token, body: {}, headers: { 'if-match': '"7"' } });
    expect([stale.status, stale.body.code]).toEqual([412, 'PRECONDITION_FAILED']);
    expect((await call('GET', `/orders/${order.id}/cancellation`, { token: alice.token })).status).toBe(404);
    expect((await call('POST', `/orders/${order.id}/cancellation`, { token: alice.token, body: {}, headers: { 'if-match': 'not-an-etag' } })).status).toBe(412);
    const current = await call('POST', `/orders/${order.id}/cancellation`, { token: alice.token, body: {}, headers: { 'if-match': '"1"' } });
    expect(current.status).toBe(202);
    await until(async () => (await call('GET', `/orders/${order.id}`, { token: alice.token })).body.status === 'CANCELED');
  });

  it('refunds the amount of the order it canceled, not the amount when it was asked for', async () => {
    const { order, product } = await newOrder(alice.token, 10);
    // The request is recorded at 10 units; the customer then replaces the items with 1 before the worker runs.
    const replaced = await call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: product.id, quantity: 1 }] } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.amount).toBe(12_000);
    await database.prisma.cancellation.create({ data: { id: '01a20097-b6ee-740a-909d-000000000002', orderId: order.id, refundAmount: order.amount } });
    await built.cancellations.completePending();
    const done = await call('GET', `/orders/${order.id}/cancellation`, { token: alice.token });
    expect(done.body).toMatchObject({ status: 'COMPLETED', refundAmount: 12_000 });
    expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).body).toMatchObject({ status: 'CANCELED', amount: 12_000 });
    const completed = await database.prisma.outboxEvent.findFirst({ where: { aggregateId: order.id, type: 'order.cancellation.completed' } });
    expect(completed?.data).toMatchObject({ outcome: 'canceled', refundAmount: 12_000 });
    expect(inventory.stock.get(product.sku)).toBe(100);
  });

  it('picks up a pending cancellation again after a restart', async () => {
    const { order, product } = await newOrder(alice.token, 4);
    await database.prisma.cancellation.create({ data: { id: '01a20097-b6ee-740a-909d-000000000001', orderId: order.id, refundAmount: order.amount } });
    const restarted = new Sweeper({ cancellations: built.cancellations, stock: built.orders.stock, idempotency: new IdempotencyStore(database.prisma) }, createLogger('restarted', 'silent'));
    restarted.start(60_000);
    try {
      await restarted.sweep();
    } finally {
      await restarted.stop();
    }
    expect((await call('GET', `/orders/${order.id}/cancellation`, { token: alice.token })).body.status).toBe('COMPLETED');
    expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).body.status).toBe('CANCELED');
    expect(inventory.stock.get(product.sku)).toBe(100);
  });
});

describe('orders subgraph', () => {
  const graphql = (query: string, token: string, variables?: Record<string, unknown>) => call('POST', '/graphql', { token, body: { query, variables } });

  it('answers order(id) with exactly the requested fields and hides another customer\'s order', async () => {
    const { order, product } = await newOrder(alice.token, 1);
    const own = await graphql('query($id: ID!) { order(id: $id) { id amount productId shipment { status } } }', alice.token, { id: order.id });
    expect(own.body).toEqual({ data: { order: { id: order.id, amount: 12_000, productId: product.id, shipment: { status: 'PREPARING' } } } });
    const other = await graphql('query($id: ID!) { order(id: $id) { id } }', bob.token, { id: order.id });
    expect(other.status).toBe(200);
    expect(other.body.data.order).toBeNull();
    expect(other.body.errors[0]).toMatchObject({ path: ['order'], extensions: { code: 'NOT_FOUND' } });
  });

  it('answers orders(first, after) newest first with user references', async () => {
    const shopper = await tokenFor(JWT_SECRET);
    const placed = [];
    for (let i = 0; i < 3; i++) placed.push((await newOrder(shopper.token)).order.id);
    const first = await graphql('{ orders(first: 2) { id user { id } } }', shopper.token);
    expect(first.body.data.orders).toEqual([
      { id: placed[2], user: { id: shopper.userId } },
      { id: placed[1], user: { id: shopper.userId } },
    ]);
    const after = await graphql('query($after: ID) { orders(first: 2, after: $after) { id } }', shopper.token, { after: placed[1] });
    expect(after.body.data.orders).toEqual([{ id: placed[0] }]);
  });

  it('refuses orders(first) outside 1..100 with VALIDATION_FAILED and the field named', async () => {
    for (const first of [-5, 0, 101]) {
      const res = await graphql(`{ orders(first: ${first}) { id } }`, alice.token);
      expect(res.status).toBe(200);
      expect(res.body.data).toBeNull();
      expect(res.body.errors[0]).toMatchObject({ path: ['orders'], extensions: { code: 'VALIDATION_FAILED', errors: [{ field: 'first', code: 'OUT_OF_RANGE' }] } });
    }
  });

  it('answers Order.items with product references, quantity, unit price and amount, and the version', async () => {
    const first = stocked(10, { price: 3_000 });
    const second = stocked(10, { price: 5_000 });
    const placed = await placeOrder(alice.token, { items: [{ productId: first.id, quantity: 2 }, { productId: second.id, quantity: 1 }] });
    expect(placed.status).toBe(201);
    const res = await graphql('query($id: ID!) { order(id: $id) { version items { id quantity unitPrice amount product { __typename id } } } }', alice.token, { id: placed.body.id });
    expect(res.body).toEqual({
      data: {
        order: {
          version: 1,
          items: [
            { id: placed.body.items[0].id, quantity: 2, unitPrice: 3_000, amount: 6_000, product: { __typename: 'Product', id: first.id } },
            { id: placed.body.items[1].id, quantity: 1, unitPrice: 5_000, amount: 5_000, product: { __typename: 'Product', id: second.id } },
          ],
        },
      },
    });
  });

  it('cancelOrder takes expectedVersion as REST takes If-Match: PRECONDITION_FAILED at a stale one, unconditional without', async () => {
    const cancel = 'mutation($id: ID!, $expectedVersion: Int) { cancelOrder(id: $id, expectedVersion: $expectedVersion) { id status version } }';
    const { order } = await newOrder();
    const stale = await graphql(cancel, alice.token, { id: order.id, expectedVersion: 9 });
    expect(stale.body.errors[0]).toMatchObject({ path: ['cancelOrder'], extensions: { code: 'PRECONDITION_FAILED' } });
    expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).body.status).toBe('PENDING');
    const invalid = await graphql(cancel, alice.token, { id: order.id, expectedVersion: 0 });
    expect(invalid.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'expectedVersion' }] });
    expect((await graphql(cancel, alice.token, { id: order.id, expectedVersion: 1 })).body.data.cancelOrder).toMatchObject({ status: 'CANCELED', version: 2 });
    const other = (await newOrder()).order;
    expect((await graphql(cancel, alice.token, { id: other.id })).body.data.cancelOrder.status).toBe('CANCELED');
  });

  describe('updateOrder, as REST PATCH', () => {
    const update = 'mutation($id: ID!, $input: UpdateOrderInput!, $expectedVersion: Int) { updateOrder(id: $id, input: $input, expectedVersion: $expectedVersion) { id status version } }';

    it('changes the coupon at the version read, and answers PRECONDITION_FAILED at a stale one', async () => {
      const { order } = await newOrder();
      const stale = await graphql(update, alice.token, { id: order.id, input: { couponCode: 'GQL-1' }, expectedVersion: 9 });
      expect(stale.body.errors[0]).toMatchObject({ path: ['updateOrder'], extensions: { code: 'PRECONDITION_FAILED' } });
      expect((await call('GET', `/orders/${order.id}`, { token: alice.token })).body.couponCode).toBeNull();
      const changed = await graphql(update, alice.token, { id: order.id, input: { couponCode: 'GQL-1' }, expectedVersion: 1 });
      expect(changed.body).toEqual({ data: { updateOrder: { id: order.id, status: 'PENDING', version: 2 } } });
      const rest = await call('GET', `/orders/${order.id}`, { token: alice.token });
      expect([rest.body.couponCode, rest.headers.get('etag')]).toEqual(['GQL-1', '"2"']);
      // Without expectedVersion the change is unconditional, as PATCH without If-Match.
      expect((await graphql(update, alice.token, { id: order.id, input: { couponCode: null } })).body.data.updateOrder.version).toBe(3);
    });

    it('keeps REST\'s rules and codes: admins move orders along, owners cancel, bad input is VALIDATION_FAILED', async () => {
      const { order, product } = await newOrder(alice.token, 2);
      expect((await graphql(update, alice.token, { id: order.id, input: { status: 'CONFIRMED' } })).body.errors[0].extensions.code).toBe('FORBIDDEN');
      expect((await graphql(update, bob.token, { id: order.id, input: { couponCode: 'NOT-MINE' } })).body.errors[0].extensions.code).toBe('NOT_FOUND');
      const invalid = await graphql(update, alice.token, { id: order.id, input: { couponCode: 'x' }, expectedVersion: 0 });
      expect(invalid.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED' });
      const confirmed = await graphql(update, admin, { id: order.id, input: { status: 'CONFIRMED' } });
      expect(confirmed.body.data.updateOrder.status).toBe('CONFIRMED');
      expect((await graphql(update, alice.token, { id: order.id, input: { couponCode: 'TOO-LATE' } })).body.errors[0].extensions.code).toBe('ORDER_NOT_EDITABLE');
      // A move backwards: the same refusal, and code, as REST gives it.
      const backwards = await graphql(update, admin, { id: order.id, input: { status: 'PENDING' } });
      const restBackwards = await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'PENDING' } });
      expect([restBackwards.status, backwards.body.errors[0].extensions.code]).toEqual([409, restBackwards.body.code]);
      const canceled = await graphql(update, alice.token, { id: order.id, input: { status: 'CANCELED' } });
      expect(canceled.body.data.updateOrder.status).toBe('CANCELED');
      expect(inventory.stock.get(product.sku)).toBe(100);
    });
  });

  it('answers 401 without a valid token and never serves its SDL', async () => {
    const res = await call('POST', '/graphql', { body: { query: '{ _service { sdl } }' } });
    expect([res.status, res.body.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect(res.text).not.toContain('type Order');
  });
});
