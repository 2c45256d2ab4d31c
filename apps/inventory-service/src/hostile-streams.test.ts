// Hostile gRPC callers against a real inventory server (in this process, on a real database:
// PGlite, or PostgreSQL with TEST_DATABASE_URL): a ReserveStream caller (raw HTTP/2, as fast as
// the connection takes it) that never reads its replies, watchers that never read, streams that
// never close, and more streams than the limits.
// For each attack the server's memory (heap and buffers of this process, the attackers' bounded
// side included) stays within +100 MB, and another caller's Reserve is answered meanwhile. The
// limits are small here (StreamLimits) so that each attack is bounded in count and time.
import { connect as connectHttp2 } from 'node:http2';
import path from 'node:path';
import { type CallOptions, credentials, makeGenericClientConstructor, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { serviceTokenSource, TokenVerifier } from '@platform/auth';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { InventoryClient, type ReserveOrderReply, ReserveRequest } from '@platform/inventory-contract';
import { createLogger, createMetrics, Health } from '@platform/service-kit';
import { createInventoryApp } from './app';
import { PrismaClient } from './generated/prisma/client';
import type { StreamLimits } from './grpc/server';
import { bearing, SECRET } from './testing/callers';

const LIMITS: StreamLimits = {
  maxStreams: 12,
  maxStreamsPerCaller: 8,
  maxWatchers: 100,
  maxWatchersPerCaller: 60,
  idleTimeoutMs: 1_000,
  maxDurationMs: 3_000,
  defaultDeadlineMs: 5_000,
  maxOpenStreams: 30,
  maxOpenStreamsPerAddress: 20,
  connectionIdleMs: 2_000,
  // Longer than this file runs: only the test of the age itself meets it (on a server of its own).
  connectionMaxAgeMs: 10 * 60_000,
};
const MB = 1024 * 1024;

let database: Database<PrismaClient>;
let built: ReturnType<typeof createInventoryApp>;
let metrics: ReturnType<typeof createMetrics>;
/** Two services allowed to call: limits per caller are per service. */
let orders: InventoryClient;
let catalog: InventoryClient;
/** A third connection for the caller whose calls must keep being answered. */
let bystander: InventoryClient;
let address: string;

/** An inventory server on the test database; two services may call it (limits per caller are per service). */
const inventoryApp = (name: string, appMetrics: ReturnType<typeof createMetrics>, streamLimits: StreamLimits) =>
  createInventoryApp({
    prisma: database.prisma,
    notifications: database,
    logger: createLogger(name, 'silent'),
    health: new Health(),
    metrics: appMetrics,
    callers: { verifier: new TokenVerifier(SECRET, { audience: 'internal' }), allowed: ['orders-service', 'catalog-service'] },
    verifier: new TokenVerifier(SECRET),
    cursorSecret: 'inventory-test-cursor-secret',
    requestTimeoutMs: 10_000,
    introspection: true,
    streamLimits,
  });

beforeAll(async () => {
  database = await openTestDatabase({ service: 'inventory_hostile', poolSize: 10, migrationsDir: path.join(__dirname, '../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  metrics = createMetrics('inventory-hostile');
  built = inventoryApp('inventory-hostile', metrics, LIMITS);
  address = `127.0.0.1:${await built.grpc.listen(0, '127.0.0.1')}`;
  const client = async (service: string) =>
    new InventoryClient(address, credentials.createInsecure(), { interceptors: [bearing(await serviceTokenSource(SECRET, service)())], 'grpc.use_local_subchannel_pool': 1 });
  orders = await client('orders-service');
  catalog = await client('catalog-service');
  bystander = await client('orders-service');
});

afterAll(async () => {
  for (const client of [orders, catalog, bystander]) client?.close();
  await built?.watch.close();
  built?.grpc.server.forceShutdown();
  await database?.close();
});

let seq = 0;
async function stockedSku(available: number): Promise<string> {
  const sku = `H-${Date.now()}-${++seq}`;
  await database.prisma.stock.create({ data: { sku, available } });
  return sku;
}
const deadline = (ms: number): Partial<CallOptions> => ({ deadline: new Date(Date.now() + ms) });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** What `promise` gave within `ms`, or 'still open'. */
const within = <T>(promise: Promise<T>, ms: number) => Promise.race([promise, sleep(ms).then(() => 'still open' as const)]);

/** The process's heap and buffers, sampled until `stop()`: what it rose to above where it started. */
function memoryWatch() {
  const used = () => {
    const { heapUsed, external } = process.memoryUsage();
    return heapUsed + external;
  };
  const start = used();
  let peak = start;
  const timer = setInterval(() => (peak = Math.max(peak, used())), 50);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, used()) - start;
    },
  };
}

/** A Reserve of another caller, answered while the attack goes on. */
async function bystanderReserves(sku: string, n: number): Promise<number> {
  return new Promise((resolve, reject) =>
    bystander.reserve({ orderId: `bystander-${sku}-${n}`, sku, quantity: 1 }, new Metadata(), deadline(5_000), (error, reply) => (error ? reject(error) : resolve(reply.remaining))),
  );
}

async function handled(method: string, code: string): Promise<number> {
  const text = await metrics.registry.getSingleMetricAsString('grpc_server_handled_total');
  const line = text.split('\n').find((row) => row.includes(`grpc_method="${method}"`) && row.includes(`grpc_code="${code}"`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

async function received(method: string): Promise<number> {
  const text = await metrics.registry.getSingleMetricAsString('grpc_server_msg_total');
  const line = text.split('\n').find((row) => row.includes(`grpc_method="${method}"`) && row.includes('direction="received"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('a ReserveStream caller that never reads its replies', () => {
  it('is read only as far as its replies go out (back-pressure), is ended by the server, and costs < 100 MB while others are served', async () => {
    const sku = await stockedSku(100);
    const memory = memoryWatch();
    // A raw HTTP/2 caller, as fast as the connection takes its bytes, that never reads an answer.
    const session = connectHttp2(`http://${address}`);
    session.on('error', () => undefined);
    const stream = session.request({ ':method': 'POST', ':path': '/inventory.v1.Inventory/ReserveStream', 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${await serviceTokenSource(SECRET, 'orders-service')()}` });
    stream.on('error', () => undefined);
    stream.pause();
    // Requests the server refuses without the database (quantity 0): its replies come as fast as it reads.
    const message = Buffer.from(ReserveRequest.encode({ orderId: 'hostile', sku, quantity: 0 }).finish());
    const frame = Buffer.concat([Buffer.alloc(5), message]);
    frame.writeUInt32BE(message.length, 1);
    const batch = Buffer.concat(Array.from({ length: 1_000 }, () => frame));
    let sent = 0;
    const served: number[] = [];
    const until = Date.now() + 4_000;
    let next = Date.now() + 500;
    while (Date.now() < until) {
      sent += 1_000;
      if (!stream.write(batch)) await Promise.race([new Promise((resolve) => stream.once('drain', resolve)), sleep(100)]);
      else await new Promise((resolve) => setImmediate(resolve));
      if (Date.now() >= next) {
        next = Date.now() + 500;
        served.push(await bystanderReserves(sku, served.length));
      }
    }
    // The attacker keeps the stream open, its replies unread: the server ends it itself once
    // nothing moved for the idle timeout (RESOURCE_EXHAUSTED: replies unread), or at the
    // maximum duration (UNAVAILABLE), whichever comes first.
    const ended = async () => (await handled('ReserveStream', 'RESOURCE_EXHAUSTED')) + (await handled('ReserveStream', 'UNAVAILABLE'));
    const giveUpAt = Date.now() + LIMITS.maxDurationMs;
    while ((await ended()) === 0 && Date.now() < giveUpAt) await sleep(100);
    const grew = memory.stop();
    stream.destroy();
    session.destroy();
    expect(served.length).toBeGreaterThanOrEqual(6);
    expect(grew).toBeLessThan(100 * MB);
    // The server read a bounded number of requests, not what the caller sent.
    expect(sent).toBeGreaterThan(10_000);
    expect(await received('ReserveStream')).toBeLessThan(5_000);
    expect(await ended()).toBe(1);
  }, 30_000);
});

describe('watchers that never read', () => {
  it('are bounded per caller and per replica (RESOURCE_EXHAUSTED past them), and cost < 100 MB while others are served', async () => {
    const sku = await stockedSku(1_000);
    const memory = memoryWatch();
    const refused: number[] = [];
    const open = (client: InventoryClient) => {
      const stream = client.watchStock({ skus: [sku] }, new Metadata(), deadline(20_000));
      stream.on('error', (error: ServiceError) => refused.push(error.code)); // never reads its levels
      return stream;
    };
    const streams = [...Array.from({ length: 100 }, () => open(orders)), ...Array.from({ length: 100 }, () => open(catalog))];
    for (let i = 0; i < 50; i++) await bystanderReserves(sku, i); // 50 changes each watcher is sent
    await sleep(500);
    const grew = memory.stop();
    expect(grew).toBeLessThan(100 * MB);
    // 60 of orders-service's (its own limit), 40 of catalog-service's (the replica's 100).
    expect(built.watch.size).toBeLessThanOrEqual(LIMITS.maxWatchers);
    expect(refused.filter((code) => code === status.RESOURCE_EXHAUSTED).length).toBe(100);
    streams.forEach((stream) => stream.cancel());
  }, 30_000);
});

describe('streams that never end', () => {
  /** A ReserveOrder that sends lines as `send` says and never half-closes. */
  function openOrder(client: InventoryClient, options: Partial<CallOptions>, orderId: string, sku: string) {
    let call: ReturnType<InventoryClient['reserveOrder']> | undefined;
    const ended = new Promise<ServiceError | ReserveOrderReply>((resolve) => {
      call = client.reserveOrder(new Metadata(), options, (error, reply) => resolve(error ?? reply));
    });
    const line = () => call?.write({ orderId, sku, quantity: 1, replacesOrderId: '' });
    return { ended, line, cancel: () => call?.cancel() };
  }

  it('ends a ReserveOrder without a deadline that goes quiet (DEADLINE_EXCEEDED), and one that never stops sending at the maximum duration (UNAVAILABLE)', async () => {
    const sku = await stockedSku(10);
    const quiet = openOrder(orders, {}, 'quiet', sku);
    quiet.line();
    const chatty = openOrder(orders, {}, 'chatty', sku);
    const chatter = setInterval(chatty.line, 200);
    try {
      const [quietEnd, chattyEnd] = await Promise.all([within(quiet.ended, 6_000), within(chatty.ended, 6_000)]);
      expect((quietEnd as ServiceError).code).toBe(status.DEADLINE_EXCEEDED);
      expect((chattyEnd as ServiceError).code).toBe(status.UNAVAILABLE);
      expect(await bystanderReserves(sku, 0)).toBe(9);
    } finally {
      clearInterval(chatter);
      quiet.cancel();
      chatty.cancel();
    }
  }, 20_000);

  it('bounds the streams open at once per caller and per replica: past them RESOURCE_EXHAUSTED, and calls are answered again once they close', async () => {
    const sku = await stockedSku(10);
    const held = [...Array.from({ length: 10 }, (_, n) => openOrder(orders, deadline(20_000), `held-o-${n}`, sku)), ...Array.from({ length: 6 }, (_, n) => openOrder(catalog, deadline(20_000), `held-c-${n}`, sku))];
    try {
      // orders-service: 8 of 10 (its limit); catalog-service: 4 of 6 (the replica's 12).
      const refusals = await Promise.all(held.map((order) => within(order.ended, 500)));
      expect(refusals.filter((end) => end !== 'still open').map((end) => (end as ServiceError).code)).toEqual(Array.from({ length: 4 }, () => status.RESOURCE_EXHAUSTED));
      expect(await bystanderReserves(sku, 1)).toBe(9);
    } finally {
      held.forEach((order) => order.cancel());
    }
    await sleep(100);
    const after = openOrder(orders, deadline(5_000), 'after', sku);
    after.line();
    expect(await within(after.ended, 500)).toBe('still open');
    after.cancel();
  }, 20_000);
});

describe('streams anyone may open: Health.Watch and reflection take no token', () => {
  type Watch = NodeJS.EventEmitter & { cancel(): void };
  const HealthClient = makeGenericClientConstructor(healthService, 'Health');
  /** A Watch on its own connection, as many clients would open them; resolves with how it ended, if it did within `ms`. */
  function watch() {
    const client = new HealthClient(address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }) as unknown as { watch(request: { service: string }): Watch; close(): void };
    const call = client.watch({ service: '' });
    const statuses: string[] = [];
    call.on('data', (reply: { status: string }) => statuses.push(reply.status));
    const ended = new Promise<number>((resolve) => call.on('error', (error: ServiceError) => resolve(error.code)));
    return { ended, statuses, close: () => (call.cancel(), client.close()) };
  }
  /** The health checker's watchers of '' (a private list): a watch the server ends must leave it. */
  const watchers = () => (built.grpc.health as unknown as { watchers: Map<string, Set<unknown>> }).watchers.get('')?.size ?? 0;

  it(`holds at most ${LIMITS.maxOpenStreamsPerAddress} per peer address (RESOURCE_EXHAUSTED past it), each at most the longest stream life, and lets go of every one`, async () => {
    const memory = memoryWatch();
    const watches = Array.from({ length: LIMITS.maxOpenStreamsPerAddress + 5 }, watch);
    try {
      const early = await Promise.all(watches.map((one) => within(one.ended, 1_000)));
      expect(early.filter((end) => end !== 'still open')).toEqual(Array.from({ length: 5 }, () => status.RESOURCE_EXHAUSTED));
      expect(watches.filter((one) => one.statuses[0] === 'SERVING')).toHaveLength(LIMITS.maxOpenStreamsPerAddress);
      expect(watchers()).toBe(LIMITS.maxOpenStreamsPerAddress);
      // Past the longest life (3 s here), each held watch ends UNAVAILABLE: watch again.
      const late = await Promise.all(watches.map((one) => within(one.ended, LIMITS.maxDurationMs + 2_000)));
      expect(late.filter((code) => code === status.UNAVAILABLE)).toHaveLength(LIMITS.maxOpenStreamsPerAddress);
      expect(watchers()).toBe(0);
      expect(memory.stop()).toBeLessThan(100 * MB);
    } finally {
      watches.forEach((one) => one.close());
    }
    // The slots came back: a new watch is served.
    const again = watch();
    try {
      expect(await within(again.ended, 500)).toBe('still open');
      expect(again.statuses).toEqual(['SERVING']);
    } finally {
      again.close();
    }
  }, 20_000);

  it('ends a reflection stream at its longest life with UNAVAILABLE even while its caller keeps asking', async () => {
    const reflectionProto = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto/grpc/reflection/v1/reflection.proto');
    const { loadPackageDefinition } = await import('@grpc/grpc-js');
    const { loadSync } = await import('@grpc/proto-loader');
    type Info = NodeJS.EventEmitter & { write(message: object): boolean; cancel(): void };
    const reflection = loadPackageDefinition(loadSync(reflectionProto, { keepCase: true })) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: new (address: string, creds: ReturnType<typeof credentials.createInsecure>, options: object) => { ServerReflectionInfo(): Info; close(): void } } } };
    };
    const client = new reflection.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
    const info = client.ServerReflectionInfo();
    let replies = 0;
    info.on('data', () => (replies += 1));
    const ended = new Promise<number>((resolve) => info.on('error', (error: ServiceError) => resolve(error.code)));
    // A request every 50 ms, read as they come: never idle, so only the longest life (3 s here) ends it.
    const asking = setInterval(() => info.write({ list_services: '' }), 50);
    try {
      expect(await within(ended, LIMITS.maxDurationMs + 3_000)).toBe(status.UNAVAILABLE);
      expect(replies).toBeGreaterThan(10);
    } finally {
      clearInterval(asking);
      info.cancel();
      client.close();
    }
  }, 15_000);

  it('closes a connection that opens no call (GOAWAY) once it has been idle for the connection idle time', async () => {
    const session = connectHttp2(`http://${address}`);
    const closed = new Promise<string>((resolve) => {
      session.once('goaway', () => resolve('goaway'));
      session.once('close', () => resolve('close'));
    });
    session.on('error', () => undefined);
    try {
      expect(await within(closed, LIMITS.connectionIdleMs + 3_000)).not.toBe('still open');
    } finally {
      session.destroy();
    }
  }, 10_000);
});

describe('connections', () => {
  it('closes a busy connection once it reaches its maximum age (GOAWAY), and a client goes on calling on a new one without a failed call', async () => {
    const maxAgeMs = 1_500;
    const aging = inventoryApp('inventory-aging', createMetrics('inventory-aging'), { ...LIMITS, connectionMaxAgeMs: maxAgeMs });
    const agingAddress = `127.0.0.1:${await aging.grpc.listen(0, '127.0.0.1')}`;
    const token = await serviceTokenSource(SECRET, 'orders-service')();
    const sku = await stockedSku(3);
    // A connection never idle: a GetStock every 100 ms, each answered before the next.
    const session = connectHttp2(`http://${agingAddress}`);
    session.on('error', () => undefined);
    const goaway = new Promise<string>((resolve) => session.once('goaway', () => resolve('goaway')));
    let busy = true;
    const rawCalls = (async () => {
      while (busy && !session.closed && !session.destroyed) {
        const stream = session.request({ ':method': 'POST', ':path': '/inventory.v1.Inventory/GetStock', 'content-type': 'application/grpc', te: 'trailers', authorization: `Bearer ${token}` });
        stream.on('error', () => undefined);
        stream.end(Buffer.from([0, 0, 0, 0, 0]));
        await new Promise((resolve) => stream.once('close', resolve));
        await sleep(100);
      }
    })();
    const client = new InventoryClient(agingAddress, credentials.createInsecure(), { interceptors: [bearing(token)], 'grpc.use_local_subchannel_pool': 1 });
    const failed: string[] = [];
    try {
      expect(await within(goaway, maxAgeMs * 1.1 + 2_000)).toBe('goaway');
      // grpc-js: the next calls go on a new connection, none lost.
      for (const deadlineAt = Date.now() + 2 * maxAgeMs; Date.now() < deadlineAt; await sleep(50)) {
        await new Promise<void>((resolve) =>
          client.getStock({ skus: [sku] }, new Metadata(), deadline(5_000), (error) => {
            if (error) failed.push(`${error.code} ${error.details}`);
            resolve();
          }),
        );
      }
      expect(failed).toEqual([]);
    } finally {
      busy = false;
      await rawCalls;
      session.destroy();
      client.close();
      aging.grpc.server.forceShutdown();
      await aging.watch.close();
    }
  }, 20_000);
});
