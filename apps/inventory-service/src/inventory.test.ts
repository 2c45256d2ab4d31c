// Inventory over real gRPC against a real database: idempotency, no oversell under
// concurrency, release, status codes, deadlines, unknown fields, health.
import path from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { credentials, type Interceptor, makeGenericClientConstructor, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { issueAccessToken, serviceTokenSource, TokenVerifier } from '@platform/auth';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { ApiError, asApiError, OutOfStock } from '@platform/errors';
import { createInventoryClient, fromGrpcStatus, type FulfilReply, InventoryClient, ReserveReply, type ReleaseReply } from '@platform/inventory-contract';
import { createLogger, createMetrics, createService, Health, listen } from '@platform/service-kit';
import { isId, newId } from '@platform/ids';
import { apiClient, tokenFor } from '@platform/test-kit';
import { createInventoryApp } from './app';
import { PrismaClient } from './generated/prisma/client';
import { createInventoryGrpc } from './grpc/server';
import { StockRepository } from './stock/repository';
import { stockLevelRoutes } from './stock/routes';
import { StockService } from './stock/service';
import { bearing, callers, failure, ordersToken, SECRET } from './testing/callers';

let database: Database<PrismaClient>;
let built: ReturnType<typeof createInventoryApp>;
let health: Health;
let metrics: ReturnType<typeof createMetrics>;
let address: string;
let client: InventoryClient;
/** What the inventory service logged, line by line. */
const logLines: Record<string, unknown>[] = [];

beforeAll(async () => {
  database = await openTestDatabase({ service: 'inventory', poolSize: 20, migrationsDir: path.join(__dirname, '../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  health = new Health();
  metrics = createMetrics('inventory-test');
  built = createInventoryApp({ prisma: database.prisma, notifications: database, logger: pino({ level: 'info' }, new Writable({ write: (chunk, _encoding, done) => (logLines.push(JSON.parse(String(chunk))), done()) })), health, metrics, callers, verifier: new TokenVerifier(SECRET), cursorSecret: 'inventory-test-cursor-secret', requestTimeoutMs: 10_000, introspection: true });
  expect(await built.stock.seedDemoStock()).toBeGreaterThanOrEqual(20);
  address = `127.0.0.1:${await built.grpc.listen(0, '127.0.0.1')}`;
  client = new InventoryClient(address, credentials.createInsecure(), { interceptors: [bearing(await ordersToken())] });
});

/** What the running test opened, closed once it ends, passed or failed. */
const afterThisTest: (() => void)[] = [];
afterEach(() => {
  for (const close of afterThisTest.splice(0)) close();
});

afterAll(async () => {
  client?.close();
  built?.grpc.server.forceShutdown();
  await database?.close();
});

let skuSeq = 0;
async function stockedSku(available: number): Promise<string> {
  skuSeq += 1;
  const sku = `T-${Date.now()}-${skuSeq}`;
  await database.prisma.stock.create({ data: { sku, available } });
  return sku;
}

function reserve(request: { orderId: string; sku: string; quantity: number }, deadlineMs = 10_000): Promise<ReserveReply> {
  return new Promise((resolve, reject) => client.reserve(request, new Metadata(), { deadline: new Date(Date.now() + deadlineMs) }, (error, reply) => (error ? reject(error) : resolve(reply))));
}

function release(orderId: string): Promise<ReleaseReply> {
  return new Promise((resolve, reject) => client.release({ orderId }, (error, reply) => (error ? reject(error) : resolve(reply))));
}

function fulfil(orderId: string): Promise<FulfilReply> {
  return new Promise((resolve, reject) => client.fulfil({ orderId }, (error, reply) => (error ? reject(error) : resolve(reply))));
}


describe('Reserve', () => {
  it('takes stock and says what is left', async () => {
    const sku = await stockedSku(10);
    const reply = await reserve({ orderId: 'order-a', sku, quantity: 3 });
    expect(reply).toEqual({ reservationId: expect.stringMatching(/^[\da-f-]{36}$/), sku, quantity: 3, remaining: 7 });
    expect(await database.prisma.stock.findUnique({ where: { sku } })).toMatchObject({ available: 7, reserved: 3 });
  });

  it('is idempotent per (order_id, sku): a retry returns the same reservation and takes nothing', async () => {
    const sku = await stockedSku(10);
    const first = await reserve({ orderId: 'order-retry', sku, quantity: 4 });
    const retries = await Promise.all([1, 2, 3].map(() => reserve({ orderId: 'order-retry', sku, quantity: 4 })));
    for (const retry of retries) expect(retry.reservationId).toBe(first.reservationId);
    expect(await database.prisma.stock.findUnique({ where: { sku } })).toMatchObject({ available: 6, reserved: 4 });
  });

  it('never oversells: 500 concurrent reserves of 1 on stock 300 → 300 succeed, 200 FAILED_PRECONDITION, 0 left', async () => {
    const sku = await stockedSku(300);
    const results = await Promise.allSettled(Array.from({ length: 500 }, (_, i) => reserve({ orderId: `burst-${i}`, sku, quantity: 1 }, 30_000)));
    const ok = results.filter((result) => result.status === 'fulfilled');
    const refused = results.filter((result): result is PromiseRejectedResult => result.status === 'rejected');
    expect(ok).toHaveLength(300);
    expect(refused).toHaveLength(200);
    for (const result of refused) {
      expect((result.reason as ServiceError).code).toBe(status.FAILED_PRECONDITION);
      expect((result.reason as ServiceError).details).toMatch(/^OUT_OF_STOCK/);
    }
    expect(await database.prisma.stock.findUnique({ where: { sku } })).toMatchObject({ available: 0, reserved: 300 });
    expect(await database.prisma.reservation.count({ where: { sku } })).toBe(300);
  }, 60_000);

  it('answers NOT_FOUND for an unknown SKU and INVALID_ARGUMENT for quantity 0 or empty fields', async () => {
    const unknown = await failure(reserve({ orderId: 'o', sku: 'NO-SUCH-SKU', quantity: 1 }));
    expect(unknown.code).toBe(status.NOT_FOUND);
    expect(unknown.details).toContain('NO-SUCH-SKU');
    const sku = await stockedSku(5);
    const zero = await failure(reserve({ orderId: 'o', sku, quantity: 0 }));
    expect(zero.code).toBe(status.INVALID_ARGUMENT);
    expect(zero.details).toMatch(/quantity/);
    const empty = await failure(reserve({ orderId: '', sku: '', quantity: 1 }));
    expect(empty.code).toBe(status.INVALID_ARGUMENT);
    expect(empty.details).toMatch(/order_id.*sku/);
  });

  it('answers DEADLINE_EXCEEDED when the work outlives the caller\'s deadline, and counts it', async () => {
    const slowStock = new StockService(new StockRepository(database.prisma));
    const original = slowStock.reserve.bind(slowStock);
    // The work is held until the test releases it, which it does only once the server has answered
    // DEADLINE_EXCEEDED: the order of events is fixed, whatever the machine's speed.
    let releaseWork: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (releaseWork = resolve));
    let heldWork: Promise<unknown> = Promise.resolve();
    slowStock.reserve = (request) => {
      const work = released.then(() => original(request));
      heldWork = work;
      return work;
    };
    const slowMetrics = createMetrics('inventory-slow');
    const slow = createInventoryGrpc({ stock: slowStock, callers, logger: createLogger('slow', 'silent'), registry: slowMetrics.registry });
    let slowClient: InventoryClient | undefined;
    try {
      slowClient = new InventoryClient(`127.0.0.1:${await slow.listen(0, '127.0.0.1')}`, credentials.createInsecure(), { interceptors: [bearing(await ordersToken())] });
      const sku = await stockedSku(5);
      const caller = slowClient;
      // Connected first, and a deadline long enough for the call to reach the server on a busy
      // machine: the work never finishes before the test releases it, so its length costs nothing.
      await new Promise<void>((resolve, reject) => caller.waitForReady(Date.now() + 10_000, (e) => (e ? reject(e) : resolve())));
      const error = await failure(new Promise((resolve, reject) => caller.reserve({ orderId: 'late', sku, quantity: 1 }, new Metadata(), { deadline: new Date(Date.now() + 500) }, (e, r) => (e ? reject(e) : resolve(r)))));
      expect(error.code).toBe(status.DEADLINE_EXCEEDED);
      // The server counts the call when its own deadline timer fires, a little after the caller's:
      // wait for that (a condition, not a fixed time), with the work still held.
      const countedLate = /grpc_method="Reserve",grpc_code="DEADLINE_EXCEEDED"[^\n]* 1/;
      const handled = () => slowMetrics.registry.getSingleMetricAsString('grpc_server_handled_total');
      for (const giveUpAt = Date.now() + 20_000; !countedLate.test(await handled()) && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await handled()).toMatch(countedLate);
      expect(await handled()).not.toMatch(/grpc_code="OK"/);
    } finally {
      releaseWork();
      await heldWork.catch(() => undefined);
      slowClient?.close();
      slow.server.forceShutdown();
    }
  });

  it('accepts a hand-encoded request that still carries the retired field 2 (item_id)', async () => {
    const sku = await stockedSku(5);
    const text = (field: number, value: string) => {
      const bytes = Buffer.from(value);
      return Buffer.concat([Buffer.from([(field << 3) | 2, bytes.length]), bytes]);
    };
    const message = Buffer.concat([text(1, 'order-legacy'), text(2, 'legacy-item-7'), Buffer.from([(3 << 3) | 0, 2]), text(4, sku)]);
    const reply = await new Promise<ReserveReply>((resolve, reject) =>
      client.makeUnaryRequest('/inventory.v1.Inventory/Reserve', (raw: Buffer) => raw, (bytes: Buffer) => ReserveReply.decode(bytes), message, (error, value) => (error ? reject(error) : resolve(value!))),
    );
    expect(reply).toMatchObject({ sku, quantity: 2, remaining: 3 });
  });
});

describe('who may call', () => {
  const callWith = async (interceptors: Interceptor[]) => {
    const caller = new InventoryClient(address, credentials.createInsecure(), { interceptors });
    try {
      return await failure(new Promise((resolve, reject) => caller.release({ orderId: 'anyone' }, (error, reply) => (error ? reject(error) : resolve(reply)))));
    } finally {
      caller.close();
    }
  };

  it('refuses Reserve and Release without a valid service token (UNAUTHENTICATED) and from services not allowed (PERMISSION_DENIED)', async () => {
    const sku = await stockedSku(5);
    expect((await callWith([])).code).toBe(status.UNAUTHENTICATED);
    expect((await callWith([bearing('not-a-token')])).code).toBe(status.UNAUTHENTICATED);
    // A person's access token, even an admin's, is for the API, not for service calls.
    expect((await callWith([bearing((await issueAccessToken(SECRET, { userId: 'u1', role: 'admin' })).accessToken)])).code).toBe(status.UNAUTHENTICATED);
    expect((await callWith([bearing(await serviceTokenSource('another-secret-another-secret-another!!', 'orders-service')())])).code).toBe(status.UNAUTHENTICATED);
    expect((await callWith([bearing(await serviceTokenSource(SECRET, 'users-service')())])).code).toBe(status.PERMISSION_DENIED);
    const anonymous = new InventoryClient(address, credentials.createInsecure());
    let refused: ServiceError;
    try {
      refused = await failure(new Promise((resolve, reject) => anonymous.reserve({ orderId: 'thief', sku, quantity: 5 }, (error, reply) => (error ? reject(error) : resolve(reply)))));
    } finally {
      anonymous.close();
    }
    expect(refused.code).toBe(status.UNAUTHENTICATED);
    expect(await database.prisma.stock.findUnique({ where: { sku } })).toMatchObject({ available: 5, reserved: 0 });
  });
});

describe('strings a caller sends', () => {
  it('answers INVALID_ARGUMENT, not INTERNAL, for NUL characters and over-long SKUs or order ids', async () => {
    const sku = await stockedSku(5);
    for (const request of [
      { orderId: 'nul', sku: `${sku}\u0000`, quantity: 1 },
      { orderId: 'long', sku: 'S'.repeat(65), quantity: 1 },
      { orderId: 'o\u0000', sku, quantity: 1 },
      { orderId: 'o'.repeat(101), sku, quantity: 1 },
    ]) {
      const error = await failure(reserve(request));
      expect([error.code, error.details]).toEqual([status.INVALID_ARGUMENT, expect.stringMatching(/sku|order_id/)]);
    }
    for (const orderId of ['x\u0000', 'o'.repeat(101)]) expect((await failure(release(orderId))).code).toBe(status.INVALID_ARGUMENT);
  });
});

describe('a batch of reservations on one SKU', () => {
  it('grants in arrival order while stock lasts; a request too large to fit does not block smaller ones after it', async () => {
    const sku = await stockedSku(5);
    const repository = new StockRepository(database.prisma);
    const ids = ['01a20097-b6ee-740a-909d-00000000b001', '01a20097-b6ee-740a-909d-00000000b002', '01a20097-b6ee-740a-909d-00000000b003', '01a20097-b6ee-740a-909d-00000000b004'];
    const outcomes = await repository.reserveBatch(sku, [
      { id: ids[0], orderId: 'b-1', quantity: 2 },
      { id: ids[1], orderId: 'b-2', quantity: 4 },
      { id: ids[2], orderId: 'b-3', quantity: 3 },
      { id: ids[3], orderId: 'b-1', quantity: 2 },
    ]);
    expect(outcomes).toEqual([
      { kind: 'reserved', reservationId: ids[0], quantity: 2, remaining: 3 },
      { kind: 'insufficient', available: 0 },
      { kind: 'reserved', reservationId: ids[2], quantity: 3, remaining: 0 },
      { kind: 'reserved', reservationId: ids[0], quantity: 2, remaining: 3 },
    ]);
    expect(await database.prisma.stock.findUnique({ where: { sku } })).toMatchObject({ available: 0, reserved: 5 });
    const again = await repository.reserveBatch(sku, [{ id: '01a20097-b6ee-740a-909d-00000000b005', orderId: 'b-3', quantity: 3 }]);
    expect(again).toEqual([{ kind: 'existing', reservationId: ids[2], quantity: 3, remaining: 0 }]);
    expect(await repository.reserveBatch('NO-SUCH-SKU', [{ id: '01a20097-b6ee-740a-909d-00000000b006', orderId: 'x', quantity: 1 }])).toEqual([{ kind: 'unknown-sku' }]);
  });
});

describe('Release', () => {
  it('returns an order\'s stock once, however often it is called', async () => {
    const sku = await stockedSku(10);
    const other = await stockedSku(10);
    await reserve({ orderId: 'order-release', sku, quantity: 4 });
    await reserve({ orderId: 'order-release', sku: other, quantity: 2 });
    const [first, second] = await Promise.all([release('order-release'), release('order-release')]);
    expect([first.releasedCount, second.releasedCount].sort()).toEqual([0, 2]);
    expect((await release('order-release')).releasedCount).toBe(0);
    expect(await database.prisma.stock.findUnique({ where: { sku } })).toMatchObject({ available: 10, reserved: 0 });
    expect(await database.prisma.stock.findUnique({ where: { sku: other } })).toMatchObject({ available: 10, reserved: 0 });
  });
});

describe('Fulfil', () => {
  it("takes a shipped order's stock off hand once: no longer reserved, never released, and on_hand can be set to what is left", async () => {
    const sku = await stockedSku(1);
    await reserve({ orderId: 'order-fulfil', sku, quantity: 1 });
    expect(await database.prisma.stock.findUnique({ where: { sku } })).toMatchObject({ available: 0, reserved: 1 });
    const [first, second] = await Promise.all([fulfil('order-fulfil'), fulfil('order-fulfil')]);
    expect([first.fulfilledCount, second.fulfilledCount].sort()).toEqual([0, 1]);
    expect(await database.prisma.stock.findUnique({ where: { sku } })).toMatchObject({ available: 0, reserved: 0 });
    // The units are gone: a later Release (a deleted order's) gives nothing back.
    expect((await release('order-fulfil')).releasedCount).toBe(0);
    expect(await database.prisma.stock.findUnique({ where: { sku } })).toMatchObject({ available: 0, reserved: 0 });
    // An empty shelf can be recorded: nothing is held against it any more.
    const level = await new Promise<{ level?: { onHand: number; reserved: number; available: number } }>((resolve, reject) => client.setStock({ sku, onHand: 0, requestId: newId() }, (error, reply) => (error ? reject(error) : resolve(reply))));
    expect(level.level).toMatchObject({ onHand: 0, reserved: 0, available: 0 });
    expect(await database.prisma.reservation.findFirst({ where: { orderId: 'order-fulfil' } })).toMatchObject({ status: 'FULFILLED', fulfilledAt: expect.any(Date) });
  });
});

describe('the client other services use', () => {
  it('maps refusals to the HTTP error format: OUT_OF_STOCK 409, and times each call on the caller\'s side', async () => {
    const callerMetrics = createMetrics('orders-test');
    const inventory = createInventoryClient(address, { serviceToken: ordersToken, registry: callerMetrics.registry });
    try {
      const sku = await stockedSku(1);
      await expect(inventory.reserve({ orderId: 'c1', sku, quantity: 1 })).resolves.toMatchObject({ remaining: 0 });
      // The client gives the domain error back (OutOfStock), which REST's mapping makes the 409.
      const asRest = (refusal: Promise<unknown>) => refusal.catch((error: unknown) => Promise.reject(error instanceof OutOfStock ? asApiError(error) : error));
      await expect(asRest(inventory.reserve({ orderId: 'c2', sku, quantity: 1 }))).rejects.toMatchObject({ status: 409, code: 'OUT_OF_STOCK' });
      await expect(asRest(inventory.reserve({ orderId: 'c3', sku: 'NOPE', quantity: 1 }))).rejects.toMatchObject({ status: 409, code: 'OUT_OF_STOCK' });
      expect(await inventory.release('c1')).toBe(1);
    } finally {
      inventory.close();
    }
    // The one outgoing-call family (libs/outgoing-calls): by target, the gRPC method, and the status the call ended with.
    const timed = await callerMetrics.registry.getSingleMetricAsString('outgoing_call_duration_seconds');
    const countOf = (method: string, code: string) => Number(new RegExp(`_count\\{[^}]*target="inventory",operation="${method}",outcome="${code}"[^}]*\\} (\\d+)`).exec(timed)?.[1]);
    expect([countOf('Reserve', 'ok'), countOf('Reserve', 'FAILED_PRECONDITION'), countOf('Reserve', 'NOT_FOUND'), countOf('Release', 'ok')]).toEqual([1, 1, 1, 1]);
  });

  it('answers 503 when inventory is down and 504 when no time is left', async () => {
    const down = createInventoryClient('127.0.0.1:1', { defaultTimeoutMs: 1_000 });
    const hurried = createInventoryClient(address, { defaultTimeoutMs: 10, serviceToken: ordersToken });
    try {
      const error = await down.reserve({ orderId: 'x', sku: 'y', quantity: 1 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect([503, 504]).toContain((error as ApiError).status);
      await expect(hurried.reserve({ orderId: 'x', sku: 'y', quantity: 1 })).rejects.toMatchObject({ status: 504, code: 'GATEWAY_TIMEOUT' });
    } finally {
      down.close();
      hurried.close();
    }
  });
});

describe('server reflection', () => {
  it('lists the Inventory and Health services and describes ReserveRequest, field 2 reserved', async () => {
    const reflectionProto = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto/grpc/reflection/v1/reflection.proto');
    const { loadPackageDefinition } = await import('@grpc/grpc-js');
    const { loadSync } = await import('@grpc/proto-loader');
    const reflection = loadPackageDefinition(loadSync(reflectionProto, { keepCase: true })) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: new (address: string, creds: ReturnType<typeof credentials.createInsecure>) => { ServerReflectionInfo(): NodeJS.EventEmitter & { write(message: object): void; end(): void }; close(): void } } } };
    };
    const client = new reflection.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
    afterThisTest.push(() => client.close());
    const ask = (request: object) =>
      new Promise<Record<string, any>>((resolve, reject) => { // eslint-disable-line @typescript-eslint/no-explicit-any
        const stream = client.ServerReflectionInfo();
        stream.on('data', resolve);
        stream.on('error', reject);
        stream.write(request);
        stream.end();
      });
    const listed = await ask({ list_services: '' });
    const names = listed.list_services_response.service.map((service: { name: string }) => service.name);
    expect(names).toEqual(expect.arrayContaining(['inventory.v1.Inventory', 'grpc.health.v1.Health']));
    const described = await ask({ file_containing_symbol: 'inventory.v1.ReserveRequest' });
    const { fromBinary } = await import('@bufbuild/protobuf');
    const { FileDescriptorProtoSchema } = await import('@bufbuild/protobuf/wkt');
    const files = (described.file_descriptor_response.file_descriptor_proto as Buffer[]).map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));
    const request = files.find((file) => file.package === 'inventory.v1')?.messageType.find((message) => message.name === 'ReserveRequest');
    // A reserved range's end is exclusive in descriptor.proto: `reserved 2` is [2, 3).
    expect(request?.reservedRange.map(({ start, end }) => [start, end])).toEqual([[2, 3]]);
    expect(request?.reservedName).toEqual(['item_id']);
  });
});

describe('buf curl, by reflection only (no local schema)', () => {
  const buf = path.resolve(__dirname, '../../../node_modules/.bin/buf');
  const curl = async (...args: string[]) => {
    const { execFile } = await import('node:child_process');
    return new Promise<string>((resolve, reject) =>
      execFile(buf, ['curl', '--protocol', 'grpc', '--http2-prior-knowledge', ...args], { timeout: 20_000 }, (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout))),
    );
  };

  it('lists the Inventory methods, checks health and calls Reserve', async () => {
    expect((await curl(`http://${address}`, '--list-methods')).split('\n')).toEqual(expect.arrayContaining(['inventory.v1.Inventory/Reserve', 'inventory.v1.Inventory/Release', 'grpc.health.v1.Health/Check']));
    expect(JSON.parse(await curl(`http://${address}/grpc.health.v1.Health/Check`))).toEqual({ status: 'SERVING' });
    const sku = await stockedSku(5);
    const reply = JSON.parse(await curl(`http://${address}/inventory.v1.Inventory/Reserve`, '-H', `authorization: Bearer ${await ordersToken()}`, '-d', JSON.stringify({ orderId: 'buf-curl-order', sku, quantity: 2 })));
    expect(reply).toMatchObject({ sku, quantity: 2, remaining: 3 });
  });
});

/** grpc.health.v1 Check of `service` at `at`, as a probe asks it; the client is closed after the test. */
function healthCheck(at: string): (service: string) => Promise<string> {
  const HealthClient = makeGenericClientConstructor(healthService, 'Health');
  const healthClient = new HealthClient(at, credentials.createInsecure()) as unknown as {
    check(request: { service: string }, callback: (error: ServiceError | null, reply: { status: string }) => void): void;
    close(): void;
  };
  afterThisTest.push(() => healthClient.close());
  return (service) => new Promise<string>((resolve, reject) => healthClient.check({ service }, (error, reply) => (error ? reject(error) : resolve(reply.status))));
}

describe('health', () => {
  it('serves grpc.health.v1 SERVING, then NOT_SERVING once the stop begins', async () => {
    const check = healthCheck(address);
    expect(await check('')).toBe('SERVING');
    expect(await check('inventory.v1.Inventory')).toBe('SERVING');
    health.markStopping();
    expect(await check('inventory.v1.Inventory')).toBe('NOT_SERVING');
    expect((await health.readiness()).ready).toBe(false);
  });
});

describe('readiness when the database is gone', () => {
  it('turns /readyz 503 and the Inventory service NOT_SERVING (the readiness probe), while the process stays SERVING (liveness)', async () => {
    // A replica of its own, its Health wired as runService wires it: the database's ping is its check.
    const own = await openTestDatabase({ service: 'inventory-ready', migrationsDir: path.join(__dirname, '../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
    const ownHealth = new Health().addCheck('database', own.ping);
    const replica = createInventoryApp({ prisma: own.prisma, notifications: own, logger: pino({ level: 'silent' }), health: ownHealth, metrics: createMetrics('inventory-ready-test'), callers, verifier: new TokenVerifier(SECRET), cursorSecret: 'inventory-test-cursor-secret', requestTimeoutMs: 10_000, introspection: true });
    const http = await listen(replica.app, 0, '127.0.0.1');
    const check = healthCheck(`127.0.0.1:${await replica.grpc.listen(0, '127.0.0.1')}`);
    afterThisTest.push(() => replica.grpc.server.forceShutdown(), () => void http.server.close());
    const readyz = () => fetch(`${http.url}/readyz`).then(async (res) => [res.status, await res.json()]);
    expect(await readyz()).toEqual([200, { status: 'ready', checks: { database: 'ok' } }]);
    expect(await check('inventory.v1.Inventory')).toBe('SERVING');
    await own.close();
    expect(await readyz()).toEqual([503, { status: 'unavailable', checks: { database: 'failing' } }]);
    expect(await check('inventory.v1.Inventory')).toBe('NOT_SERVING');
    // '' is what the liveness and startup probes ask: a database outage must not restart the pod.
    expect(await check('')).toBe('SERVING');
  });
});

describe('what operators see of each call', () => {
  it('logs one line per call with its method, code, duration and trace id, and times it by method, shape and code', async () => {
    const sku = await stockedSku(5);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const traced = new Metadata();
    traced.set('traceparent', traceparent);
    await new Promise((resolve, reject) => client.reserve({ orderId: 'logged-order', sku, quantity: 1 }, traced, (error, reply) => (error ? reject(error) : resolve(reply))));
    expect((await failure(reserve({ orderId: 'logged-order-2', sku, quantity: 99 }))).code).toBe(status.FAILED_PRECONDITION);
    const lines = logLines.filter((line) => line.msg === 'grpc call' && line.grpcMethod === '/inventory.v1.Inventory/Reserve');
    expect(lines.slice(-2)).toEqual([
      expect.objectContaining({ traceId: '0af7651916cd43dd8448eb211c80319c', grpcCode: 'OK', durationMs: expect.any(Number), caller: 'service:orders-service' }),
      expect.objectContaining({ grpcCode: 'FAILED_PRECONDITION', durationMs: expect.any(Number), caller: 'service:orders-service' }),
    ]);
    const timed = await metrics.registry.getSingleMetricAsString('grpc_server_handling_seconds');
    expect(timed).toMatch(/grpc_server_handling_seconds_count\{[^}]*grpc_method="Reserve",grpc_type="unary",grpc_code="OK"[^}]*\} [1-9]/);
    expect(timed).toMatch(/grpc_server_handling_seconds_count\{[^}]*grpc_method="Reserve",grpc_type="unary",grpc_code="FAILED_PRECONDITION"[^}]*\} [1-9]/);
  });
});

describe('who the log says called', () => {
  /** The log line of one Release call made with `interceptors`. */
  async function loggedRelease(interceptors: Interceptor[]): Promise<Record<string, unknown> | undefined> {
    const orderId = `logged-${newId()}`;
    const caller = new InventoryClient(address, credentials.createInsecure(), { interceptors });
    try {
      await new Promise((resolve) => caller.release({ orderId }, resolve));
    } finally {
      caller.close();
    }
    return logLines.filter((line) => line.msg === 'grpc call' && line.grpcMethod === '/inventory.v1.Inventory/Release').at(-1);
  }

  it('names the service its verified token names, as REST names a caller; else the client by its User-Agent', async () => {
    expect(await loggedRelease([bearing(await ordersToken())])).toMatchObject({ grpcCode: 'OK', caller: 'service:orders-service' });
    // Verified, though not allowed: named, and refused.
    expect(await loggedRelease([bearing(await serviceTokenSource(SECRET, 'users-service')())])).toMatchObject({ grpcCode: 'PERMISSION_DENIED', caller: 'service:users-service' });
    // A token that claims orders-service under another key names no service: the client instead.
    const forged = await loggedRelease([bearing(await serviceTokenSource('another-secret-another-secret-another!!', 'orders-service')())]);
    expect(forged).toMatchObject({ grpcCode: 'UNAUTHENTICATED', caller: expect.stringMatching(/^client:grpc-node-js\/\d/) });
  });
});

describe('stock levels over REST (behind the gateway\'s /v1/stock-levels)', () => {
  let http: Awaited<ReturnType<typeof listen>>;
  const call = apiClient(() => http.url);
  let admin: string;
  let customer: string;

  beforeAll(async () => {
    http = await listen(built.app, 0, '127.0.0.1');
    admin = (await tokenFor(SECRET, 'admin')).token;
    customer = (await tokenFor(SECRET, 'customer')).token;
  });

  afterAll(async () => {
    await http?.close();
  });

  it('lets an admin stock a new SKU (201), then replace its count with If-Match; reads carry an ETag', async () => {
    const sku = `REST-${Date.now()}`;
    const created = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 12 } });
    expect([created.status, created.headers.get('location'), created.body]).toEqual([201, `/v1/stock-levels/${sku}`, { sku, onHand: 12, reserved: 0, available: 12, updatedAt: expect.any(String) }]);
    const etag = created.headers.get('etag') as string;
    const read = await call('GET', `/stock-levels/${sku}`, { token: customer });
    expect([read.status, read.headers.get('etag'), read.body.available]).toEqual([200, etag, 12]);

    // Orderable now: a reservation holds 5 of them.
    await reserve({ orderId: `rest-${sku}`, sku, quantity: 5 });
    const held = await call('GET', `/stock-levels/${sku}`, { token: customer });
    expect(held.body).toMatchObject({ onHand: 12, reserved: 5, available: 7 });
    expect(held.headers.get('etag')).not.toBe(etag);

    expect((await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 20 }, headers: { 'if-match': etag } })).status).toBe(412);
    const replaced = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 20 }, headers: { 'if-match': held.headers.get('etag') as string } });
    expect([replaced.status, replaced.body]).toEqual([200, expect.objectContaining({ onHand: 20, reserved: 5, available: 15 })]);
    // Below what orders hold: refused, nothing changed.
    const below = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 4 } });
    expect([below.status, below.body.code]).toEqual([409, 'CONFLICT']);
    expect((await call('GET', `/stock-levels/${sku}`, { token: admin })).body.onHand).toBe(20);
  });

  it('answers an If-Match naming a version past any it holds 412, as every other service does, never 400 or 422', async () => {
    const sku = `BIG-${Date.now()}`;
    expect((await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 3 } })).status).toBe(201);
    for (const tag of ['"2147483648"', '"99999999999999999999"', `"${'9'.repeat(400)}"`]) {
      const res = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 4 }, headers: { 'if-match': tag } });
      expect([tag.length, res.status, res.body.code]).toEqual([tag.length, 412, 'PRECONDITION_FAILED']);
    }
    expect((await call('GET', `/stock-levels/${sku}`, { token: admin })).body.onHand).toBe(3);
  });

  it('never creates a SKU under If-Match: * (only a level that exists matches it), and replaces an existing one', async () => {
    const sku = `ANY-${Date.now()}`;
    const refused = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 3 }, headers: { 'if-match': '*' } });
    expect([refused.status, refused.body.code]).toEqual([412, 'PRECONDITION_FAILED']);
    expect((await call('GET', `/stock-levels/${sku}`, { token: admin })).status).toBe(404);
    expect((await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 3 } })).status).toBe(201);
    const replaced = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 4 }, headers: { 'if-match': '*' } });
    expect([replaced.status, replaced.body.onHand]).toEqual([200, 4]);
  });

  it('only creates a SKU under If-None-Match: * (create-only): a level that exists is 412 and stays as it was', async () => {
    const sku = `NONE-${Date.now()}`;
    const created = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 3 }, headers: { 'if-none-match': '*' } });
    expect([created.status, created.body.onHand]).toEqual([201, 3]);
    // Another client's create-only PUT of the same SKU, to another count (and to the same one: a
    // write that would change nothing is still not a creation).
    for (const onHand of [7, 3]) {
      const refused = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand }, headers: { 'if-none-match': '*' } });
      expect([onHand, refused.status, refused.body.code]).toEqual([onHand, 412, 'PRECONDITION_FAILED']);
    }
    const level = await call('GET', `/stock-levels/${sku}`, { token: admin });
    expect([level.body.onHand, level.headers.get('etag')]).toEqual([3, created.headers.get('etag')]);
  });

  it('answers a replay with the same Idempotency-Key exactly as the first PUT: 201 with Location, the same body', async () => {
    const sku = `REPLAY-${Date.now()}`;
    const key = `replay-${sku}`;
    const first = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 5 }, headers: { 'idempotency-key': key } });
    const again = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 5 }, headers: { 'idempotency-key': key } });
    expect([first.status, first.headers.get('location')]).toEqual([201, `/v1/stock-levels/${sku}`]);
    expect([again.status, again.headers.get('location'), again.headers.get('etag'), again.body]).toEqual([201, `/v1/stock-levels/${sku}`, first.headers.get('etag'), first.body]);
    // A later PUT with another key changes a SKU that exists: 200, no Location, and the replay of that one says so too.
    const later = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 6 }, headers: { 'idempotency-key': `${key}-2` } });
    const laterAgain = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 6 }, headers: { 'idempotency-key': `${key}-2` } });
    expect([later.status, later.headers.get('location'), laterAgain.status, laterAgain.headers.get('location')]).toEqual([200, null, 200, null]);
    // The first key again, after that change: still the first answer (its level and ETag), not the level now.
    const replayedLater = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 5 }, headers: { 'idempotency-key': key } });
    expect([replayedLater.status, replayedLater.headers.get('location'), replayedLater.headers.get('etag'), replayedLater.body]).toEqual([201, `/v1/stock-levels/${sku}`, first.headers.get('etag'), first.body]);
  });

  it('says 201 to exactly one of two first PUTs of a new SKU racing, even when both looked before either wrote', async () => {
    // Each look at the SKU's level waits until both PUTs have looked: a 201 decided by a look
    // before the write would go to both.
    let looked = 0;
    let bothLooked: () => void = () => undefined;
    const barrier = new Promise<void>((resolve) => (bothLooked = resolve));
    class LookingTogether extends StockRepository {
      override async findLevels(skus: readonly string[]) {
        if (++looked === 2) bothLooked();
        await barrier;
        return super.findLevels(skus);
      }
    }
    const racing = createService({
      logger: createLogger('inventory-race-test', 'silent'), health: new Health(), metrics: createMetrics('inventory-race-test'), requestTimeoutMs: 10_000,
      graphql: (_req, _res, next) => next(), internal: [], verifier: new TokenVerifier(SECRET), outages: [],
      resources: [stockLevelRoutes(new StockService(new LookingTogether(database.prisma)), 'inventory-test-cursor-secret')],
    });
    const racingHttp = await listen(racing, 0, '127.0.0.1');
    afterThisTest.push(() => void racingHttp.close());
    const racingCall = apiClient(() => racingHttp.url);
    const sku = `RACE-${Date.now()}`;
    const answers = await Promise.all([5, 7].map((onHand) => racingCall('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand } })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 201]);
    expect(answers.map((answer) => answer.headers.get('location')).filter(Boolean)).toEqual([`/v1/stock-levels/${sku}`]);
  });

  it('lists levels in SKU order with cursor paging, or only the SKUs asked for', async () => {
    const prefix = `LIST-${Date.now()}`;
    for (const [index, onHand] of [3, 1, 2].entries()) await call('PUT', `/stock-levels/${prefix}-${index}`, { token: admin, body: { onHand } });
    const chosen = await call('GET', `/stock-levels?sku=${prefix}-2,${prefix}-0,NO-SUCH-SKU`, { token: customer });
    expect(chosen.body.items.map((level: { sku: string; onHand: number }) => [level.sku, level.onHand])).toEqual([[`${prefix}-0`, 3], [`${prefix}-2`, 2]]);
    const gap = await call('GET', `/stock-levels?sku=${prefix}-2,,${prefix}-0`, { token: customer });
    expect([gap.status, gap.body.errors]).toEqual([400, [expect.objectContaining({ field: 'sku[1]', code: 'REQUIRED' })]]);
    const seen: string[] = [];
    let cursor = '';
    for (let pages = 0; pages < 100; pages++) {
      const page = await call('GET', `/stock-levels?size=7${cursor}`, { token: customer });
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((level: { sku: string }) => level.sku));
      if (!page.body.hasNext) break;
      cursor = `&cursor=${encodeURIComponent(page.body.nextCursor)}`;
    }
    expect(seen).toEqual([...seen].sort());
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(expect.arrayContaining([`${prefix}-0`, `${prefix}-1`, `${prefix}-2`]));
  });

  it('serves Product.availableQuantity as a subgraph for the SKUs the gateway sends, 0 for an unstocked one', async () => {
    const sku = await stockedSku(7);
    const query = 'query ($representations: [_Any!]!) { _entities(representations: $representations) { ... on Product { id availableQuantity } } }';
    const representations = [
      { __typename: 'Product', id: 'p-1', sku },
      { __typename: 'Product', id: 'p-2', sku: 'NEVER-STOCKED' },
    ];
    const answer = await call('POST', '/graphql', { token: customer, body: { query, variables: { representations } } });
    expect(answer.body).toEqual({ data: { _entities: [{ id: 'p-1', availableQuantity: 7 }, { id: 'p-2', availableQuantity: 0 }] } });
    expect((await call('POST', '/graphql', { body: { query, variables: { representations } } })).status).toBe(401);
  });

  it('answers 401 without a token, 403 to a customer who writes, 404 for an unknown SKU, 400/422 for bad input', async () => {
    expect((await call('GET', '/stock-levels/KB-MECH-001')).status).toBe(401);
    expect((await call('PUT', '/stock-levels/KB-MECH-001', { token: customer, body: { onHand: 1 } })).status).toBe(403);
    expect((await call('GET', '/stock-levels/NO-SUCH-SKU', { token: customer })).status).toBe(404);
    expect((await call('GET', `/stock-levels/${'x'.repeat(65)}`, { token: customer })).status).toBe(404);
    expect((await call('PUT', '/stock-levels/KB-MECH-001', { token: admin, body: { onHand: -1 } })).status).toBe(422);
    expect((await call('PUT', '/stock-levels/KB-MECH-001', { token: admin, body: { onHand: 1, extra: true } })).status).toBe(400);
    expect((await call('PUT', `/stock-levels/${'x'.repeat(65)}`, { token: admin, body: { onHand: 1 } })).body).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'sku' }] });
    expect((await call('DELETE', '/stock-levels/KB-MECH-001', { token: admin })).status).toBe(405);
  });

  it('answers a SKU in a GET path that no column can hold as that stock level not found (404), naming the SKU', async () => {
    const sku = 'x'.repeat(65);
    const res = await call('GET', `/stock-levels/${sku}`, { token: customer });
    expect([res.status, res.body.code, res.body.message]).toEqual([404, 'NOT_FOUND', `Stock level for SKU ${sku} not found.`]);
  });

  // Changed: PUT's refusals were worded by the use case's hand check ("skus[0] is longer than 64
  // characters", naming a field the client never sent, INVALID_FORMAT), GET's by the validation
  // library (TOO_LONG). Both now come from the one schema and library, as every other 422 does.
  it('names the parameter at fault from the refusal itself, not from its wording: sku, or the Idempotency-Key', async () => {
    const longKey = await call('PUT', '/stock-levels/KB-MECH-001', { token: admin, body: { onHand: 1 }, headers: { 'idempotency-key': 'k'.repeat(101) } });
    const brokenRule = 'Some fields break a rule; correct them and resend.';
    expect([longKey.status, longKey.body.code, longKey.body.message, longKey.body.errors]).toEqual([422, 'VALIDATION_FAILED', brokenRule, [{ field: 'Idempotency-Key', code: 'TOO_LONG', message: 'Idempotency-Key must have at most 100 characters.' }]]);
    const longSku = await call('PUT', `/stock-levels/${'x'.repeat(65)}`, { token: admin, body: { onHand: 1 } });
    expect([longSku.status, longSku.body.message, longSku.body.errors]).toEqual([422, brokenRule, [{ field: 'sku', code: 'TOO_LONG', message: 'sku must have at most 64 characters.' }]]);
  });

  it('refuses a SKU by one rule whichever door it comes through: GET and PUT over REST, GetStock and SetStock over gRPC', async () => {
    const grpcRefusal = async (work: (callback: (error: ServiceError | null) => void) => unknown) => {
      const error = await failure(new Promise((resolve, reject) => work((e) => (e ? reject(e) : resolve(undefined)))));
      return [error.code, fromGrpcStatus(error)?.fieldErrors];
    };
    // The field's name, as each door calls it, stripped from the message: what remains is the rule's own words.
    const ruleOf = (errors: { field: string; code: string; message: string }[], field: string) => errors.map((error) => [error.field, error.code, error.message.replace(field, '<field>')]);
    for (const sku of ['x'.repeat(65), 'A\u0001B', '😀'.repeat(33)]) {
      const listed = await call('GET', `/stock-levels?sku=${encodeURIComponent(sku)}`, { token: customer });
      const put = await call('PUT', `/stock-levels/${encodeURIComponent(sku)}`, { token: admin, body: { onHand: 1 } });
      const [getCode, getErrors] = await grpcRefusal((callback) => client.getStock({ skus: ['KB-MECH-001', sku] }, callback));
      const [setCode, setErrors] = await grpcRefusal((callback) => client.setStock({ sku, onHand: 1, requestId: newId() }, callback));
      const rule = ruleOf(listed.body.errors, 'sku[0]').map(([, code, message]) => [code, message]);
      expect([sku, listed.status, put.status, getCode, setCode]).toEqual([sku, 422, 422, status.INVALID_ARGUMENT, status.INVALID_ARGUMENT]);
      expect(ruleOf(put.body.errors, 'sku')).toEqual(rule.map((entry) => ['sku', ...entry]));
      expect(ruleOf(getErrors as never, 'skus[1]')).toEqual(rule.map((entry) => ['skus[1]', ...entry]));
      expect(ruleOf(setErrors as never, 'sku')).toEqual(rule.map((entry) => ['sku', ...entry]));
    }
  });

  it('answers 422 in the error format, never a 5xx, for SKUs the database cannot hold: control characters, too many characters', async () => {
    for (const sku of ['A\u0001B', 'A\tB', 'A\u007fB', '😀'.repeat(33), 'x'.repeat(65), `OK-1,${'😀'.repeat(33)}`]) {
      const res = await call('GET', `/stock-levels?sku=${encodeURIComponent(sku)}`, { token: customer });
      expect([sku, res.status, res.body.code, res.body.errors[0]?.field]).toEqual([sku, 422, 'VALIDATION_FAILED', expect.stringMatching(/^sku/)]);
    }
    expect((await call('GET', `/stock-levels?sku=${encodeURIComponent('Ünïcode-😀')}`, { token: customer })).status).toBe(200);
  });

  it('answers 400/422, never a 5xx, for paging numbers beyond a 32-bit integer', async () => {
    for (const [name, value] of [['size', '2147483648'], ['page', '2147483648'], ['offset', '2147483648'], ['limit', '-2147483649'], ['page', '99999999999999999999'], ['offset', '2147483647'], ['page', '2147483647']]) {
      const res = await call('GET', `/stock-levels?${name}=${value}`, { token: customer });
      expect([name, value, res.status < 500, typeof res.body.code === 'string' || Array.isArray(res.body.items)]).toEqual([name, value, true, true]);
    }
    const huge = await call('GET', '/stock-levels?offset=2147483648', { token: customer });
    expect([huge.status, huge.body.errors]).toEqual([422, [{ field: 'offset', code: 'OUT_OF_RANGE', message: 'offset must be at most 2147483647.' }]]);
  });

  describe('stock.changed', () => {
    const eventsOf = async (sku: string) => (await database.prisma.outboxEvent.findMany({ where: { aggregateType: 'stock', aggregateId: sku }, orderBy: { position: 'asc' } })).map((event) => ({ id: event.id, type: event.type, sequence: event.sequence, data: event.data }));
    const grpcCall = <Req, Res>(method: (request: Req, callback: (error: ServiceError | null, reply: Res) => void) => unknown, request: Req) =>
      new Promise<Res>((resolve, reject) => method.call(client, request, (error, reply) => (error ? reject(error) : resolve(reply))));
    const setStock = (sku: string, onHand: number) => grpcCall(client.setStock, { sku, onHand, requestId: `${sku}-${onHand}-${Math.random()}` });
    const adjustStock = (sku: string, delta: number) => grpcCall(client.adjustStock, { sku, delta, changeReason: 'count', reason: '', requestId: `${sku}-${delta}-${Math.random()}` });

    it('a SKU created below the threshold by PUT /stock-levels/{sku} records stock.changed (low), with a UUIDv7 id; one created at or above it records nothing', async () => {
      const startedAt = Date.now();
      const low = `NEW-LOW-${startedAt}`;
      const created = await call('PUT', `/stock-levels/${low}`, { token: admin, body: { onHand: 3 } });
      expect(created.status).toBe(201);
      const events = await eventsOf(low);
      expect(events).toEqual([{ id: expect.any(String), type: 'stock.changed', sequence: 1, data: { sku: low, available: 3, reserved: 0, lowStockThreshold: 10, low: true } }]);
      expect(isId(events[0].id)).toBe(true);
      // An id written in SQL carries its time as libs/ids' do: the first 48 bits are Unix milliseconds.
      const millisecondsOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);
      expect(millisecondsOf(events[0].id)).toBeGreaterThanOrEqual(startedAt);
      expect(millisecondsOf(events[0].id)).toBeLessThanOrEqual(millisecondsOf(newId()));

      const plenty = `NEW-OK-${Date.now()}`;
      expect((await call('PUT', `/stock-levels/${plenty}`, { token: admin, body: { onHand: 10 } })).status).toBe(201);
      expect(await eventsOf(plenty)).toEqual([]);
    });

    it('a PUT or SetStock to the on-hand count a level already has changes nothing: 200, the same ETag and version, no event; a stale If-Match is still 412', async () => {
      const sku = `NOOP-${Date.now()}`;
      const created = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 3 } });
      expect(created.status).toBe(201);
      const etag = created.headers.get('etag') as string;
      const versionOf = async () => Number((await database.prisma.stock.findUniqueOrThrow({ where: { sku } })).version);
      const version = await versionOf();
      const events = await eventsOf(sku);

      const same = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 3 }, headers: { 'if-match': etag } });
      expect([same.status, same.headers.get('etag'), same.body]).toEqual([200, etag, created.body]);
      const unconditional = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 3 } });
      expect([unconditional.status, unconditional.headers.get('etag'), unconditional.body]).toEqual([200, etag, created.body]);
      await setStock(sku, 3);
      expect(await versionOf()).toBe(version);
      expect(await eventsOf(sku)).toEqual(events);
      // If-Match still counts for a write that changes nothing.
      const stale = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 3 }, headers: { 'if-match': `"${version + 1}"` } });
      expect([stale.status, stale.body.code]).toEqual([412, 'PRECONDITION_FAILED']);
      // Another client's If-Match on the ETag it read still applies its real change.
      const changed = await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 4 }, headers: { 'if-match': etag } });
      expect([changed.status, changed.body.onHand]).toEqual([200, 4]);
    });

    it("happens at the level's updatedAt, exactly, whichever call moved it across the threshold: its webhook's timestamp is the change GET /stock-levels/{sku} shows", async () => {
      // The trigger's now() and the statement's updated_at = now() are one transaction's start; this keeps them one.
      const sku = `AT-${Date.now()}`;
      const eventTimes = async () => (await database.prisma.outboxEvent.findMany({ where: { aggregateType: 'stock', aggregateId: sku }, orderBy: { position: 'asc' } })).map((event) => event.occurredAt.toISOString());
      const seen: [string, unknown][] = [];
      const look = async (step: string) => {
        const level = await call('GET', `/stock-levels/${sku}`, { token: admin });
        seen.push([step, level.body.updatedAt]);
      };
      expect((await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 3 } })).status).toBe(201); // created low
      await look('created');
      expect((await call('PUT', `/stock-levels/${sku}`, { token: admin, body: { onHand: 12 } })).status).toBe(200); // 12: up
      await look('put');
      await reserve({ orderId: `${sku}-order`, sku, quantity: 5 }); // 7: down
      await look('reserved');
      await release(`${sku}-order`); // 12: up
      await look('released');
      await adjustStock(sku, -5); // 7: down
      await look('adjusted');
      const times = await eventTimes();
      expect(times).toHaveLength(5);
      expect(seen).toEqual(seen.map(([step], index) => [step, times[index]]));
    });

    it("gRPC's SetStock and AdjustStock record the same stock.changed as REST's PUT /stock-levels/{sku} when crossing the threshold", async () => {
      const viaRest = `PARITY-REST-${Date.now()}`;
      const viaGrpc = `PARITY-GRPC-${Date.now()}`;
      for (const onHand of [12, 5, 20]) expect((await call('PUT', `/stock-levels/${viaRest}`, { token: admin, body: { onHand } })).status).toBeLessThan(300);
      await setStock(viaGrpc, 12);
      await setStock(viaGrpc, 5);
      await adjustStock(viaGrpc, 15);
      const withoutSku = async (sku: string) => (await eventsOf(sku)).map(({ type, sequence, data }) => [type, sequence, { ...(data as object), sku: undefined }, (data as { sku: string }).sku === sku]);
      const fromRest = await withoutSku(viaRest);
      expect(fromRest).toEqual([
        ['stock.changed', 1, { sku: undefined, available: 5, reserved: 0, lowStockThreshold: 10, low: true }, true],
        ['stock.changed', 2, { sku: undefined, available: 20, reserved: 0, lowStockThreshold: 10, low: false }, true],
      ]);
      expect(await withoutSku(viaGrpc)).toEqual(fromRest);
    });
  });
});
