// The stock calls beyond Reserve/Release, over real gRPC against a real database (PGlite, or
// PostgreSQL with TEST_DATABASE_URL): GetStock, SetStock, AdjustStock (idempotent per
// request_id), WatchStock (levels first, then every change in order, across replicas),
// ReserveOrder (all lines or none, also under 200 concurrent orders) and ReserveStream.
import dns from 'node:dns';
import path from 'node:path';
import { type CallOptions, type ClientReadableStream, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { TokenVerifier } from '@platform/auth';
import { Conflict, NotFound, OutOfStock } from '@platform/errors';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { describeInventoryRules } from '@platform/inventory-contract/testing';
import { createInventoryClient, fromGrpcStatus, InventoryClient, type InventoryGateway, REFUSED_SKUS_METADATA, type ReserveOrderReply, type ReserveReply, type ReserveRequest, type StockLevel } from '@platform/inventory-contract';
import { createLogger, createMetrics, Health } from '@platform/service-kit';
import { createInventoryApp } from './app';
import { DEFAULT_STREAM_LIMITS } from './grpc/server';
import { PrismaClient } from './generated/prisma/client';
import { bearing, callers, failure, ordersToken, SECRET } from './testing/callers';


type Replica = ReturnType<typeof createInventoryApp> & { metrics: ReturnType<typeof createMetrics>; address: string; client: InventoryClient };
let database: Database<PrismaClient>;
/** Two replicas on one database: a change made through one reaches watchers of the other. */
let replicas: Replica[];
let client: InventoryClient;
/** The client orders-service calls inventory with. */
let gateway: InventoryGateway;

async function startReplica(name: string): Promise<Replica> {
  const metrics = createMetrics(name);
  const built = createInventoryApp({ prisma: database.prisma, notifications: database, logger: createLogger(name, 'silent'), health: new Health(), metrics, callers, verifier: new TokenVerifier(SECRET), cursorSecret: 'inventory-test-cursor-secret', requestTimeoutMs: 10_000, introspection: true });
  const address = `127.0.0.1:${await built.grpc.listen(0, '127.0.0.1')}`;
  return { ...built, metrics, address, client: new InventoryClient(address, credentials.createInsecure(), { interceptors: [bearing(await ordersToken())] }) };
}

beforeAll(async () => {
  database = await openTestDatabase({ service: 'inventory_streams', poolSize: 20, migrationsDir: path.join(__dirname, '../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  replicas = [await startReplica('inventory-a'), await startReplica('inventory-b')];
  client = replicas[0].client;
  gateway = createInventoryClient(replicas[0].address, { serviceToken: ordersToken });
});

afterAll(async () => {
  gateway?.close();
  for (const replica of replicas ?? []) {
    replica.client.close();
    await replica.watch.close();
    replica.grpc.server.forceShutdown();
  }
  await database?.close();
});

let seq = 0;
const uniqueSku = () => `W-${Date.now()}-${++seq}`;
async function stockedSku(available: number): Promise<string> {
  const sku = uniqueSku();
  await database.prisma.stock.create({ data: { sku, available } });
  return sku;
}
const deadline = (ms = 10_000): Partial<CallOptions> => ({ deadline: new Date(Date.now() + ms) });
const stockOf = (sku: string) => database.prisma.stock.findUnique({ where: { sku }, select: { available: true, reserved: true } });

function unary<Req, Res>(method: (request: Req, metadata: Metadata, options: Partial<CallOptions>, callback: (error: ServiceError | null, reply: Res) => void) => unknown, request: Req, on = client, deadlineMs?: number): Promise<Res> {
  return new Promise((resolve, reject) => method.call(on, request, new Metadata(), deadline(deadlineMs), (error, reply) => (error ? reject(error) : resolve(reply))));
}
const getStock = (skus: string[]) => unary(client.getStock, { skus });
const setStock = (sku: string, onHand: number, requestId: string) => unary(client.setStock, { sku, onHand, requestId });
const adjustStock = (sku: string, delta: number, requestId: string, reason = 'count') => unary(client.adjustStock, { sku, delta, changeReason: reason, reason: '', requestId });
const release = async (orderId: string) => (await unary(client.release, { orderId })).releasedCount;
const fulfil = async (orderId: string) => (await unary(client.fulfil, { orderId })).fulfilledCount;
const statusesOf = async (orderId: string) => (await database.prisma.reservation.findMany({ where: { orderId }, orderBy: { sku: 'asc' } })).map(({ sku, quantity, status, replacedBy, handedOver }) => ({ sku, quantity, status, replacedBy, handedOver }));

function reserveOrder(lines: { orderId: string; sku: string; quantity: number; replacesOrderId?: string }[], options: Partial<CallOptions> = deadline(30_000)): Promise<ReserveOrderReply> {
  return new Promise((resolve, reject) => {
    const call = client.reserveOrder(new Metadata(), options, (error, reply) => (error ? reject(error) : resolve(reply)));
    for (const line of lines) call.write({ replacesOrderId: '', ...line });
    call.end();
  });
}

/** Every watch a test opened: afterEach cancels those still open, so a failed test leaves no watcher behind for the next. */
const openWatches = new Set<ClientReadableStream<StockLevel>>();
afterEach(async () => {
  for (const stream of openWatches) stream.cancel();
  openWatches.clear();
  await eventually(() => (replicas ?? []).every((replica) => replica.watch.size === 0), 10_000);
});

/** Collects what a WatchStock stream sends; `until` resolves once `count` levels arrived. */
function watch(skus: string[], on = client, options: Partial<CallOptions> = {}) {
  const levels: StockLevel[] = [];
  const stream: ClientReadableStream<StockLevel> = on.watchStock({ skus }, new Metadata(), options);
  openWatches.add(stream);
  const waiting: { count: number; resolve: () => void }[] = [];
  stream.on('data', (level: StockLevel) => {
    levels.push(level);
    for (const wait of waiting.filter((w) => levels.length >= w.count)) wait.resolve();
  });
  const ended = new Promise<ServiceError | undefined>((resolve) => {
    stream.on('error', (error: ServiceError) => resolve(error));
    stream.on('end', () => resolve(undefined));
  }).finally(() => openWatches.delete(stream));
  return {
    levels,
    stream,
    ended,
    until: (count: number, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (levels.length >= count) return resolve();
        const timer = setTimeout(() => reject(new Error(`saw ${levels.length} levels, waited for ${count}: ${JSON.stringify(levels)}`)), timeoutMs);
        waiting.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      }),
  };
}

async function eventually(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('GetStock', () => {
  it('answers each known SKU in the order asked, on_hand = available + reserved, unknown SKUs left out', async () => {
    const a = await stockedSku(10);
    const b = await stockedSku(3);
    await reserveOrder([{ orderId: 'get-1', sku: a, quantity: 4 }]);
    const reply = await getStock([b, 'NO-SUCH-SKU', a]);
    expect(reply.levels).toEqual([
      { sku: b, onHand: 3, reserved: 0, available: 3 },
      { sku: a, onHand: 10, reserved: 4, available: 6 },
    ]);
  });

  it('answers INVALID_ARGUMENT for no SKUs, more than 100, or an empty SKU', async () => {
    for (const skus of [[], Array.from({ length: 101 }, (_, i) => `S-${i}`), ['']]) expect((await failure(getStock(skus))).code).toBe(status.INVALID_ARGUMENT);
  });
});

describe('SetStock and AdjustStock', () => {
  it('SetStock stocks a SKU inventory did not know (a product just created), which can then be reserved', async () => {
    const sku = uniqueSku();
    expect(await setStock(sku, 7, `set-${sku}`)).toEqual({ level: { sku, onHand: 7, reserved: 0, available: 7 } });
    await reserveOrder([{ orderId: `o-${sku}`, sku, quantity: 2 }]);
    expect(await setStock(sku, 5, `set2-${sku}`)).toEqual({ level: { sku, onHand: 5, reserved: 2, available: 3 } });
    expect(await stockOf(sku)).toEqual({ available: 3, reserved: 2 });
  });

  it('applies a change once per request_id: retries (also concurrent) return the level it left and change nothing', async () => {
    const sku = await stockedSku(10);
    const replies = await Promise.all(Array.from({ length: 5 }, () => adjustStock(sku, 5, `adj-${sku}`, 'delivery')));
    for (const reply of replies) expect(reply.level).toEqual({ sku, onHand: 15, reserved: 0, available: 15 });
    await adjustStock(sku, -3, `adj2-${sku}`, 'breakage');
    expect((await adjustStock(sku, 5, `adj-${sku}`, 'delivery')).level).toEqual({ sku, onHand: 15, reserved: 0, available: 15 });
    expect(await stockOf(sku)).toEqual({ available: 12, reserved: 0 });
    expect(await database.prisma.stockChange.findMany({ where: { sku }, orderBy: { createdAt: 'asc' }, select: { requestId: true, kind: true, amount: true, reason: true, availableAfter: true } })).toEqual([
      { requestId: `adj-${sku}`, kind: 'ADJUST', amount: 5, reason: 'delivery', availableAfter: 15 },
      { requestId: `adj2-${sku}`, kind: 'ADJUST', amount: -3, reason: 'breakage', availableAfter: 12 },
    ]);
    const reused = await failure(adjustStock(sku, 9, `adj-${sku}`, 'delivery'));
    expect([reused.code, reused.details]).toEqual([status.INVALID_ARGUMENT, expect.stringContaining('already used')]);
  });

  it('never lets available go below zero: FAILED_PRECONDITION, and the refused request_id stays free', async () => {
    const sku = await stockedSku(5);
    await reserveOrder([{ orderId: `hold-${sku}`, sku, quantity: 3 }]);
    const take = await failure(adjustStock(sku, -3, `too-much-${sku}`));
    expect([take.code, take.details]).toEqual([status.FAILED_PRECONDITION, expect.stringContaining('2 available')]);
    const set = await failure(setStock(sku, 2, `below-${sku}`));
    expect([set.code, set.details]).toEqual([status.FAILED_PRECONDITION, expect.stringContaining('3 reserved')]);
    expect(await stockOf(sku)).toEqual({ available: 2, reserved: 3 });
    expect(await database.prisma.stockChange.count({ where: { sku } })).toBe(0);
    // Nothing was kept for the refused request_id: once the stock allows it, the same id applies.
    await adjustStock(sku, 10, `delivery-${sku}`);
    expect((await adjustStock(sku, -3, `too-much-${sku}`)).level).toEqual({ sku, onHand: 12, reserved: 3, available: 9 });
  });

  it('answers NOT_FOUND for AdjustStock of an unknown SKU and INVALID_ARGUMENT for bad fields', async () => {
    expect((await failure(adjustStock('NO-SUCH-SKU', 1, 'adj-unknown'))).code).toBe(status.NOT_FOUND);
    const sku = await stockedSku(1);
    for (const bad of [adjustStock(sku, 0, 'zero'), adjustStock(sku, 1, ''), setStock(sku, -1, 'neg'), setStock('', 1, 'empty'), adjustStock(sku, 1, 'long-reason', 'r'.repeat(201))]) {
      expect((await failure(bad)).code).toBe(status.INVALID_ARGUMENT);
    }
  });
});

describe('WatchStock', () => {
  it('sends the current levels first, then every change in commit order, whichever replica made it', async () => {
    const a = await stockedSku(100);
    const b = await stockedSku(50);
    const later = uniqueSku();
    const watcher = watch([a, b, later], replicas[1].client);
    await watcher.until(2);
    expect(watcher.levels).toEqual([
      { sku: a, onHand: 100, reserved: 0, available: 100 },
      { sku: b, onHand: 50, reserved: 0, available: 50 },
    ]);
    // Changes through replica A: one at a time, so each is its own commit.
    const expected: Pick<StockLevel, 'sku' | 'available'>[] = [];
    let available = 100;
    for (let i = 1; i <= 20; i++) {
      await unary(client.reserve, { orderId: `watch-${a}-${i}`, sku: a, quantity: 1 });
      expected.push({ sku: a, available: --available });
    }
    await adjustStock(b, -5, `watch-adj-${b}`);
    expected.push({ sku: b, available: 45 });
    await unary(client.release, { orderId: `watch-${a}-1` });
    expected.push({ sku: a, available: ++available });
    await setStock(later, 9, `watch-new-${later}`);
    expected.push({ sku: later, available: 9 });
    await watcher.until(2 + expected.length);
    expect(watcher.levels.slice(2).map(({ sku, available }) => ({ sku, available }))).toEqual(expected);
    for (const level of watcher.levels) expect(level.onHand).toBe(level.available + level.reserved);
    watcher.stream.cancel();
  });

  it('sends every level it saw change under concurrent reservations, never an older one after a newer one', async () => {
    const sku = await stockedSku(300);
    const watcher = watch([sku]);
    await watcher.until(1);
    // What is checked is the order of levels, not speed: a deadline a loaded machine cannot miss.
    await Promise.all(Array.from({ length: 300 }, (_, i) => unary(replicas[i % 2].client.reserve, { orderId: `burst-${sku}-${i}`, sku, quantity: 1 }, replicas[i % 2].client, 60_000)));
    await eventually(() => watcher.levels.at(-1)?.available === 0);
    const seen = watcher.levels.map((level) => level.available);
    // Batched reservations change the row once per batch: fewer levels than calls, each lower.
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeLessThan(seen[i - 1]);
    watcher.stream.cancel();
  }, 90_000);

  it('frees the watch when the caller cancels or its deadline passes, and answers DEADLINE_EXCEEDED', async () => {
    const sku = await stockedSku(5);
    const cancelled = watch([sku]);
    await cancelled.until(1);
    await eventually(() => replicas[0].watch.size === 1);
    cancelled.stream.cancel();
    expect((await cancelled.ended)?.code).toBe(status.CANCELLED);
    await eventually(() => replicas[0].watch.size === 0);

    const timed = watch([sku], client, deadline(300));
    await timed.until(1);
    expect((await timed.ended)?.code).toBe(status.DEADLINE_EXCEEDED);
    await eventually(() => replicas[0].watch.size === 0);
  });

  it('refuses callers without a service token and bad SKU lists', async () => {
    const anonymous = new InventoryClient(replicas[0].address, credentials.createInsecure());
    try {
      expect((await watch(['X'], anonymous).ended)?.code).toBe(status.UNAUTHENTICATED);
    } finally {
      anonymous.close();
    }
    expect((await watch([]).ended)?.code).toBe(status.INVALID_ARGUMENT);
    expect(replicas[0].watch.size).toBe(0);
  });
});

// The rules orders-service's fake inventory is held to as well (testing/fake-inventory.test.ts there).
describeInventoryRules('inventory-service', () => ({ client: gateway, stocked: stockedSku, levels: async (sku) => (await stockOf(sku))! }));

describe('ReserveOrder in place of another order (replaces_order_id: an order whose items changed)', () => {
  const lines = (orderId: string, replacesOrderId: string, ...items: [string, number][]) => items.map(([sku, quantity]) => ({ orderId, sku, quantity, replacesOrderId }));

  it('lowers a quantity with no spare stock; the old order\'s Release then gives back what the new one did not take over', async () => {
    const [a, b] = [await stockedSku(2), await stockedSku(1)];
    await reserveOrder(lines('old-1', '', [a, 2], [b, 1]));
    // Nothing is spare: a new order of one unit of `a` does not fit.
    expect((await failure(reserveOrder(lines('other-1', '', [a, 1])))).code).toBe(status.FAILED_PRECONDITION);
    // In place of old-1 it does: its units count as available to the replacement.
    const reply = await reserveOrder(lines('new-1', 'old-1', [a, 1]));
    expect(reply.reservations).toEqual([{ reservationId: expect.any(String), sku: a, quantity: 1, remaining: 0, error: undefined }]);
    expect([await stockOf(a), await stockOf(b)]).toEqual([{ available: 0, reserved: 2 }, { available: 0, reserved: 1 }]);
    expect(await statusesOf('old-1')).toEqual(
      [
        { sku: a, quantity: 2, status: 'REPLACED', replacedBy: 'new-1', handedOver: 1 },
        { sku: b, quantity: 1, status: 'REPLACED', replacedBy: 'new-1', handedOver: 0 },
      ].sort((x, y) => x.sku.localeCompare(y.sku)),
    );
    // The replacement kept: the old order's units it did not take over go back, once.
    expect(await release('old-1')).toBe(2);
    expect(await release('old-1')).toBe(0);
    expect([await stockOf(a), await stockOf(b)]).toEqual([{ available: 1, reserved: 1 }, { available: 1, reserved: 0 }]);
    expect(await release('new-1')).toBe(1);
    expect([await stockOf(a), await stockOf(b)]).toEqual([{ available: 2, reserved: 0 }, { available: 1, reserved: 0 }]);
  });

  it("undoes a replacement with the replacement's own Release: the old reservations are back as they were, once", async () => {
    const a = await stockedSku(3);
    await reserveOrder(lines('old-2', '', [a, 2]));
    await reserveOrder(lines('new-2', 'old-2', [a, 3]));
    expect(await stockOf(a)).toEqual({ available: 0, reserved: 3 });
    expect(await release('new-2')).toBe(1);
    expect(await stockOf(a)).toEqual({ available: 1, reserved: 2 });
    expect(await statusesOf('old-2')).toEqual([{ sku: a, quantity: 2, status: 'RESERVED', replacedBy: null, handedOver: 0 }]);
    expect(await statusesOf('new-2')).toEqual([{ sku: a, quantity: 3, status: 'RELEASED', replacedBy: null, handedOver: 0 }]);
    expect(await release('new-2')).toBe(0);
    expect(await stockOf(a)).toEqual({ available: 1, reserved: 2 });
    // A retry of the undone call takes nothing again (the order holds its lines already).
    await reserveOrder(lines('new-2', 'old-2', [a, 3]));
    expect(await stockOf(a)).toEqual({ available: 1, reserved: 2 });
    expect(await release('old-2')).toBe(1);
    expect(await stockOf(a)).toEqual({ available: 3, reserved: 0 });
  });

  it('refuses a replacement needing more than the old units plus what is free, and changes nothing', async () => {
    const a = await stockedSku(3);
    await reserveOrder(lines('old-3', '', [a, 2]));
    const error = await failure(reserveOrder(lines('new-3', 'old-3', [a, 4])));
    expect([error.code, error.details]).toEqual([status.FAILED_PRECONDITION, `OUT_OF_STOCK: ${a} has 1 available, 4 requested; nothing was reserved.`]);
    expect(await stockOf(a)).toEqual({ available: 1, reserved: 2 });
    expect(await statusesOf('old-3')).toEqual([{ sku: a, quantity: 2, status: 'RESERVED', replacedBy: null, handedOver: 0 }]);
    expect(await statusesOf('new-3')).toEqual([]);
  });

  it('ships a replacement: Fulfil takes its units, the old order\'s Release the rest, and a later Release of the shipped order undoes nothing', async () => {
    const a = await stockedSku(2);
    await reserveOrder(lines('old-4', '', [a, 2]));
    await reserveOrder(lines('new-4', 'old-4', [a, 1]));
    expect(await fulfil('new-4')).toBe(1);
    expect(await stockOf(a)).toEqual({ available: 0, reserved: 1 });
    expect(await release('new-4')).toBe(0);
    expect(await statusesOf('old-4')).toEqual([{ sku: a, quantity: 2, status: 'REPLACED', replacedBy: 'new-4', handedOver: 1 }]);
    expect(await release('old-4')).toBe(1);
    expect(await stockOf(a)).toEqual({ available: 1, reserved: 0 });
  });

  it('ships an order whose replacement lost: Fulfil ends the replacement too, and its late Release changes nothing', async () => {
    // A PUT reserved new-7 in place of old-7, then lost its write to the order's confirmation, and
    // the order shipped (Fulfil of the key it still held) before the PUT released new-7.
    const [a, b] = [await stockedSku(3), await stockedSku(1)];
    await reserveOrder(lines('old-7', '', [a, 1]));
    await reserveOrder(lines('new-7', 'old-7', [a, 2], [b, 1]));
    expect([await stockOf(a), await stockOf(b)]).toEqual([{ available: 1, reserved: 2 }, { available: 0, reserved: 1 }]);
    expect(await fulfil('old-7')).toBe(1);
    // The shipped unit left (on hand 2); nothing else is held.
    expect([await stockOf(a), await stockOf(b)]).toEqual([{ available: 2, reserved: 0 }, { available: 1, reserved: 0 }]);
    expect(await release('new-7')).toBe(0);
    expect([await stockOf(a), await stockOf(b)]).toEqual([{ available: 2, reserved: 0 }, { available: 1, reserved: 0 }]);
    expect((await statusesOf('old-7')).map((row) => row.status)).toEqual(['FULFILLED']);
    expect((await statusesOf('new-7')).map((row) => row.status)).toEqual(['RELEASED', 'RELEASED']);
  });

  it('lets one of two concurrent replacements of one order take its units; the other, short of them, is refused as a conflict', async () => {
    const a = await stockedSku(2);
    await reserveOrder(lines('old-6', '', [a, 2]));
    const outcomes = await Promise.allSettled([reserveOrder(lines('new-6a', 'old-6', [a, 1])), reserveOrder(lines('new-6b', 'old-6', [a, 1]))]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
    const winner = outcomes[0].status === 'fulfilled' ? 'new-6a' : 'new-6b';
    // Not OUT_OF_STOCK: the units are there, held by the replacement that won; the loser's caller read the order before it.
    const refused = (outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason as ServiceError;
    const conflict = fromGrpcStatus(refused);
    expect(conflict).toBeInstanceOf(Conflict);
    expect([refused.code, conflict?.code, conflict?.message]).toEqual([status.FAILED_PRECONDITION, 'CONFLICT', expect.stringContaining('old-6 no longer holds its reservations')]);
    expect(await stockOf(a)).toEqual({ available: 0, reserved: 2 });
    expect(await statusesOf('old-6')).toEqual([{ sku: a, quantity: 2, status: 'REPLACED', replacedBy: winner, handedOver: 1 }]);
    expect(await release('old-6')).toBe(1);
    expect(await stockOf(a)).toEqual({ available: 1, reserved: 1 });
    expect(await release(winner)).toBe(1);
    expect(await stockOf(a)).toEqual({ available: 2, reserved: 0 });
  });

  it('refuses a replacement of an order that holds nothing any more as a conflict, and one that fits in free stock reserves', async () => {
    const a = await stockedSku(2);
    await reserveOrder(lines('old-8', '', [a, 1]));
    expect(await release('old-8')).toBe(1);
    const error = await failure(reserveOrder(lines('new-8', 'old-8', [a, 3])));
    expect([error.code, fromGrpcStatus(error)?.code]).toEqual([status.FAILED_PRECONDITION, 'CONFLICT']);
    expect(await statusesOf('new-8')).toEqual([]);
    // Within free stock the replacement needs nothing from the order it names.
    await reserveOrder(lines('new-8b', 'old-8', [a, 2]));
    expect(await stockOf(a)).toEqual({ available: 0, reserved: 2 });
  });

  it('answers INVALID_ARGUMENT when an order names itself, or its lines name different orders to replace', async () => {
    const a = await stockedSku(5);
    const b = await stockedSku(5);
    const itself = await failure(reserveOrder(lines('self-5', 'self-5', [a, 1])));
    expect([itself.code, itself.details]).toEqual([status.INVALID_ARGUMENT, expect.stringContaining('replaces_order_id')]);
    const mixed = await failure(reserveOrder([...lines('mixed-5', 'x', [a, 1]), ...lines('mixed-5', 'y', [b, 1])]));
    expect(mixed.code).toBe(status.INVALID_ARGUMENT);
    expect([await stockOf(a), await stockOf(b)]).toEqual([{ available: 5, reserved: 0 }, { available: 5, reserved: 0 }]);
  });
});

describe('ReserveOrder', () => {
  it('reserves every line in one call and answers one reply, lines in the order sent', async () => {
    const [a, b, c] = [await stockedSku(10), await stockedSku(10), await stockedSku(10)];
    const reply = await reserveOrder([
      { orderId: 'ro-1', sku: b, quantity: 2 },
      { orderId: 'ro-1', sku: a, quantity: 1 },
      { orderId: 'ro-1', sku: c, quantity: 10 },
    ]);
    expect(reply).toEqual({
      orderId: 'ro-1',
      reservations: [
        { reservationId: expect.any(String), sku: b, quantity: 2, remaining: 8, error: undefined },
        { reservationId: expect.any(String), sku: a, quantity: 1, remaining: 9, error: undefined },
        { reservationId: expect.any(String), sku: c, quantity: 10, remaining: 0, error: undefined },
      ],
    });
    // A retry (the same order) returns the same reservations and takes nothing.
    const again = await reserveOrder([
      { orderId: 'ro-1', sku: b, quantity: 2 },
      { orderId: 'ro-1', sku: a, quantity: 1 },
      { orderId: 'ro-1', sku: c, quantity: 10 },
    ]);
    expect(again.reservations.map((r) => r.reservationId)).toEqual(reply.reservations.map((r) => r.reservationId));
    expect([await stockOf(a), await stockOf(b), await stockOf(c)]).toEqual([
      { available: 9, reserved: 1 },
      { available: 8, reserved: 2 },
      { available: 0, reserved: 10 },
    ]);
  });

  it('reserves nothing when one line does not fit: FAILED_PRECONDITION OUT_OF_STOCK naming the short SKUs', async () => {
    const [plenty, scarce] = [await stockedSku(10), await stockedSku(1)];
    const error = await failure(reserveOrder([
      { orderId: 'ro-short', sku: plenty, quantity: 3 },
      { orderId: 'ro-short', sku: scarce, quantity: 2 },
    ]));
    expect([error.code, error.details]).toEqual([status.FAILED_PRECONDITION, expect.stringMatching(/^OUT_OF_STOCK: .*nothing was reserved/)]);
    expect(JSON.parse((error.metadata.get(REFUSED_SKUS_METADATA)[0] as Buffer).toString())).toEqual([scarce]);
    // The caller reads the same domain error back from the status, never from its text.
    expect(fromGrpcStatus(error)).toEqual(new OutOfStock(error.details, [scarce]));
    expect([await stockOf(plenty), await stockOf(scarce)]).toEqual([{ available: 10, reserved: 0 }, { available: 1, reserved: 0 }]);
    expect(await database.prisma.reservation.count({ where: { orderId: 'ro-short' } })).toBe(0);

    const unknown = await failure(reserveOrder([{ orderId: 'ro-unknown', sku: plenty, quantity: 1 }, { orderId: 'ro-unknown', sku: 'NO-SUCH-SKU', quantity: 1 }]));
    expect(unknown.code).toBe(status.NOT_FOUND);
    expect(JSON.parse((unknown.metadata.get(REFUSED_SKUS_METADATA)[0] as Buffer).toString())).toEqual(['NO-SUCH-SKU']);
    expect(fromGrpcStatus(unknown)).toEqual(new NotFound(unknown.details, ['NO-SUCH-SKU']));
    expect(await stockOf(plenty)).toEqual({ available: 10, reserved: 0 });
  });

  it('answers INVALID_ARGUMENT for no lines, lines of different orders, a SKU twice, or a bad quantity', async () => {
    const sku = await stockedSku(10);
    for (const lines of [
      [],
      [{ orderId: 'x1', sku, quantity: 1 }, { orderId: 'x2', sku: 'other', quantity: 1 }],
      [{ orderId: 'x3', sku, quantity: 1 }, { orderId: 'x3', sku, quantity: 2 }],
      [{ orderId: 'x4', sku, quantity: 0 }],
      Array.from({ length: 101 }, (_, i) => ({ orderId: 'x5', sku: `S-${i}`, quantity: 1 })),
    ]) {
      expect((await failure(reserveOrder(lines))).code).toBe(status.INVALID_ARGUMENT);
    }
    expect(await stockOf(sku)).toEqual({ available: 10, reserved: 0 });
  });

  it('never reserves part of an order: 200 concurrent 3-line orders competing for the same SKUs', async () => {
    const skus = [await stockedSku(150), await stockedSku(120), await stockedSku(90)];
    const orders = Array.from({ length: 200 }, (_, i) => {
      // Different line orders, so the statements lock SKUs in different request orders.
      const lines = skus.map((sku, k) => ({ orderId: `race-${skus[0]}-${i}`, sku, quantity: 1 + ((i + k) % 2) }));
      return i % 2 ? lines.reverse() : lines;
    });
    const results = await Promise.allSettled(orders.map((lines) => reserveOrder(lines, deadline(60_000))));
    const refused = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    for (const result of refused) expect((result.reason as ServiceError).code).toBe(status.FAILED_PRECONDITION);
    const granted = results.filter((result) => result.status === 'fulfilled').length;
    expect(granted).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    // Per order: every line reserved or none.
    const held = await database.prisma.reservation.groupBy({ by: ['orderId'], where: { orderId: { startsWith: `race-${skus[0]}-` } }, _count: true });
    expect(held.length).toBe(granted);
    for (const order of held) expect(order._count).toBe(3);
    // Per SKU: stock is conserved and what is reserved matches the reservations.
    for (const [index, sku] of skus.entries()) {
      const row = await stockOf(sku);
      const reservations = await database.prisma.reservation.aggregate({ where: { sku }, _sum: { quantity: true } });
      expect(row!.available + row!.reserved).toBe([150, 120, 90][index]);
      expect(row!.reserved).toBe(reservations._sum.quantity ?? 0);
      expect(row!.available).toBeGreaterThanOrEqual(0);
    }
  }, 120_000);
});

describe('ReserveStream', () => {
  it('answers one reply per request in the order sent; a refusal is a reply and the stream goes on', async () => {
    const sku = await stockedSku(3);
    const stream = client.reserveStream(new Metadata(), deadline(30_000));
    const replies: ReserveReply[] = [];
    stream.on('data', (reply: ReserveReply) => replies.push(reply));
    const ended = new Promise<ServiceError | undefined>((resolve) => {
      stream.on('error', resolve);
      stream.on('end', () => resolve(undefined));
    });
    const requests: ReserveRequest[] = [
      ...Array.from({ length: 5 }, (_, i) => ({ orderId: `rs-${sku}-${i}`, sku, quantity: 1 })),
      { orderId: 'rs-unknown', sku: 'NO-SUCH-SKU', quantity: 1 },
      { orderId: 'rs-bad', sku, quantity: 0 },
      { orderId: `rs-${sku}-0`, sku, quantity: 1 },
    ];
    for (const request of requests) stream.write(request);
    stream.end();
    expect(await ended).toBeUndefined();
    expect(replies.map((reply) => (reply.error ? status[reply.error.code] : reply.quantity))).toEqual([1, 1, 1, 'FAILED_PRECONDITION', 'FAILED_PRECONDITION', 'NOT_FOUND', 'INVALID_ARGUMENT', 1]);
    expect(replies[3].error?.message).toMatch(/^OUT_OF_STOCK/);
    // The repeat of the first order returns its reservation.
    expect(replies[7].reservationId).toBe(replies[0].reservationId);
    expect(await stockOf(sku)).toEqual({ available: 0, reserved: 3 });
  });

  it('ends the stream UNAUTHENTICATED for a caller without a service token, reserving nothing', async () => {
    const sku = await stockedSku(3);
    const anonymous = new InventoryClient(replicas[0].address, credentials.createInsecure());
    try {
      const stream = anonymous.reserveStream();
      stream.on('data', () => undefined);
      const ended = new Promise<ServiceError>((resolve) => stream.on('error', resolve));
      stream.write({ orderId: 'rs-thief', sku, quantity: 3 });
      stream.end();
      expect((await ended).code).toBe(status.UNAUTHENTICATED);
    } finally {
      anonymous.close();
    }
    expect(await stockOf(sku)).toEqual({ available: 3, reserved: 0 });
  });
});

describe('the fields a refusal names', () => {
  /** The fields of an INVALID_ARGUMENT, as the domain error in its trailing metadata names them (sorted: the order is not the contract). */
  const fieldsOf = async (call: Promise<unknown>) => {
    const error = await failure(call);
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    return (fromGrpcStatus(error)?.fieldErrors ?? []).map((entry) => entry.field).sort();
  };

  it('are the .proto\'s names, in every call', async () => {
    const sku = await stockedSku(5);
    expect(await fieldsOf(unary(client.reserve, { orderId: '', sku: 'x'.repeat(65), quantity: 0 }))).toEqual(['order_id', 'quantity', 'sku']);
    expect(await fieldsOf(unary(client.release, { orderId: 'o'.repeat(101) }))).toEqual(['order_id']);
    expect(await fieldsOf(getStock([sku, sku, 'A', 'B', 'x'.repeat(65)]))).toEqual(['skus[3]']);
    expect(await fieldsOf(getStock([]))).toEqual(['skus']);
    expect(await fieldsOf(setStock(sku, -1, 'r'.repeat(101)))).toEqual(['on_hand', 'request_id']);
    expect(await fieldsOf(adjustStock(sku, 0, 'adj', 'r'.repeat(201)))).toEqual(['delta', 'reason']);
    const lines = [
      { orderId: 'n-1', sku: '', quantity: 1 },
      { orderId: 'n-2', sku, quantity: 1 },
      { orderId: 'n-1', sku, quantity: 0 },
    ];
    expect(await fieldsOf(reserveOrder(lines))).toEqual(['lines[0].sku', 'lines[2].quantity', 'lines[2].sku', 'order_id']);
    expect(await fieldsOf(reserveOrder(Array.from({ length: 101 }, (_, i) => ({ orderId: 'many', sku: `S-${i}`, quantity: 1 }))))).toEqual(['lines']);
  });
});

describe('metrics per method', () => {
  it('times every call by method, shape and status code', async () => {
    const text = await replicas[0].metrics.registry.getSingleMetricAsString('grpc_server_handling_seconds');
    for (const [method, type, code] of [
      ['GetStock', 'unary', 'OK'],
      ['SetStock', 'unary', 'OK'],
      ['AdjustStock', 'unary', 'OK'],
      ['Reserve', 'unary', 'OK'],
      // A watch ends only when its caller goes.
      ['WatchStock', 'server_stream', 'CANCELLED'],
      ['ReserveOrder', 'client_stream', 'OK'],
      ['ReserveStream', 'bidi_stream', 'OK'],
    ]) {
      expect(text).toMatch(new RegExp(`grpc_server_handling_seconds_count\\{[^}]*grpc_method="${method}",grpc_type="${type}",grpc_code="${code}"\\} [1-9]`));
    }
  });
});

describe('the client orders uses, given an address that names several replicas', () => {
  /** GetStock calls replica `index` answered OK so far. */
  const answered = async (index: number) => {
    const { values } = await replicas[index].metrics.registry.getSingleMetric('grpc_server_handled_total')!.get();
    return values.find(({ labels }) => labels.grpc_method === 'GetStock' && labels.grpc_code === 'OK')?.value ?? 0;
  };

  it('sends its calls to each replica in turn (round_robin), not all of them down the first connection', async () => {
    const sku = await stockedSku(5);
    // What a headless Service's DNS name gives: one address per pod.
    const spread = createInventoryClient(`ipv4:${replicas.map(({ address }) => address).join(',')}`, { serviceToken: ordersToken });
    const before = [await answered(0), await answered(1)];
    try {
      for (let call = 0; call < 20; call++) expect(await spread.getStock([sku])).toEqual([expect.objectContaining({ sku, available: 5 })]);
    } finally {
      spread.close();
    }
    const calls = [(await answered(0)) - before[0], (await answered(1)) - before[1]];
    expect(calls[0] + calls[1]).toBe(20);
    // Both connections open within the first calls; from then on, one call each in turn.
    expect(Math.min(...calls)).toBeGreaterThanOrEqual(7);
  });
});

describe('the client orders uses, given a DNS name whose addresses change (a headless Service scaled, then rolled)', () => {
  /** A name only this test answers (dns.promises.lookup, which grpc-js's dns resolver asks). */
  const NAME = 'inventory-grpc.replicas.test';
  let addresses: string[] = [];
  const systemLookup = dns.promises.lookup.bind(dns.promises);

  /** A replica on its own loopback address, every one on the same port as behind a headless Service; its connections age out after 1 s. */
  async function replicaAt(name: string, host: string, port: number) {
    const metrics = createMetrics(name);
    const built = createInventoryApp({ prisma: database.prisma, notifications: database, logger: createLogger(name, 'silent'), health: new Health(), metrics, callers, verifier: new TokenVerifier(SECRET), cursorSecret: 'inventory-test-cursor-secret', requestTimeoutMs: 10_000, introspection: false, streamLimits: { ...DEFAULT_STREAM_LIMITS, connectionMaxAgeMs: 1_000 } });
    const bound = await built.grpc.listen(port, host);
    const answered = async () => (await metrics.registry.getSingleMetric('grpc_server_handled_total')!.get()).values.find(({ labels }) => labels.grpc_method === 'GetStock' && labels.grpc_code === 'OK')?.value ?? 0;
    return { ...built, port: bound, answered };
  }

  it('calls a replica the name gains once its connections age out, and answers every call while a replica leaves', async () => {
    const lookup = jest.spyOn(dns.promises, 'lookup').mockImplementation((async (host: string, options: dns.LookupOptions) => (host === NAME ? addresses.map((address) => ({ address, family: 4 })) : systemLookup(host, options))) as typeof dns.promises.lookup);
    const first = await replicaAt('inventory-first', '127.0.0.2', 0);
    const added = await replicaAt('inventory-added', '127.0.0.3', first.port);
    addresses = ['127.0.0.2'];
    const spread = createInventoryClient(`dns:///${NAME}:${first.port}`, { serviceToken: ordersToken });
    const sku = await stockedSku(5);
    const failures: string[] = [];
    const call = async () => {
      try {
        expect(await spread.getStock([sku])).toEqual([expect.objectContaining({ sku, available: 5 })]);
      } catch (error) {
        failures.push(String(error));
      }
    };
    try {
      for (let i = 0; i < 5; i++) await call();
      expect([await first.answered(), await added.answered()]).toEqual([5, 0]);

      // Scaled up: the name now has both. The first replica's connection ages out (GOAWAY), the
      // client resolves the name again and spreads its calls over both.
      addresses = ['127.0.0.2', '127.0.0.3'];
      for (const giveUpAt = Date.now() + 10_000; (await added.answered()) === 0 && Date.now() < giveUpAt; ) {
        await call();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await added.answered()).toBeGreaterThan(0);

      // Rolled: the first replica leaves the name and stops as a pod does (NOT_SERVING, then GOAWAY
      // with its calls let finish). Every call goes on being answered, by the one left.
      addresses = ['127.0.0.3'];
      const before = (await first.answered()) + (await added.answered());
      const stopped = first.grpc.stoppable.close();
      for (let i = 0; i < 20; i++) await call();
      await stopped;
      expect((await first.answered()) + (await added.answered()) - before).toBe(20);
      // Once it has stopped, the one left answers them all.
      const left = await added.answered();
      for (let i = 0; i < 5; i++) await call();
      expect(failures).toEqual([]);
      expect((await added.answered()) - left).toBe(5);
    } finally {
      spread.close();
      lookup.mockRestore();
      for (const replica of [first, added]) {
        await replica.watch.close();
        replica.grpc.server.forceShutdown();
      }
    }
  });
});

describe('when the database cannot be reached', () => {
  it('answers UNAVAILABLE, which the client orders uses turns into 503 with Retry-After, not INTERNAL', async () => {
    const { PrismaPg } = await import('@prisma/adapter-pg');
    // Nothing listens on port 1: every query fails to connect, as when PostgreSQL is down.
    const unreachable = new PrismaClient({ adapter: new PrismaPg({ connectionString: 'postgresql://postgres@127.0.0.1:1/inventory', connectionTimeoutMillis: 1_000 }) });
    const metrics = createMetrics('inventory-down');
    const built = createInventoryApp({ prisma: unreachable, notifications: database, logger: createLogger('inventory-down', 'silent'), health: new Health(), metrics, callers, verifier: new TokenVerifier(SECRET), cursorSecret: 'inventory-test-cursor-secret', requestTimeoutMs: 10_000, introspection: false });
    const address = `127.0.0.1:${await built.grpc.listen(0, '127.0.0.1')}`;
    const raw = new InventoryClient(address, credentials.createInsecure(), { interceptors: [bearing(await ordersToken())] });
    const orders = createInventoryClient(address, { serviceToken: ordersToken });
    try {
      const refused = await unary(raw.getStock, { skus: ['ANY-SKU'] }, raw).catch((error: ServiceError) => error);
      expect([(refused as ServiceError).code, (refused as ServiceError).details]).toEqual([status.UNAVAILABLE, 'Inventory cannot reach its database right now; retry shortly.']);
      const seenByOrders = await orders.getStock(['ANY-SKU']).catch((error: unknown) => error);
      expect(seenByOrders).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': expect.stringMatching(/^\d+$/) } });
    } finally {
      orders.close();
      raw.close();
      await built.watch.close();
      built.grpc.server.forceShutdown();
      await unreachable.$disconnect();
    }
  });
});
