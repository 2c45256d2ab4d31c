// The JetStream transport against a nats-server of its own (a free port, a temporary store):
// acknowledged publishes, ordered delivery with explicit acks, redelivery of what a handler
// refused, duplicates of a republished batch dropped, a durable consumer that resumes, and both
// sides carrying on across broker kills (a second server of the test's own, on a free port), and
// a stream bounded in age and size, also one that existed before the bounds.
import { DiscardPolicy, jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { createLogger } from '@platform/service-kit';
import { freePort, NatsServer } from '@platform/test-kit';
import { toCloudEvent } from './envelope';
import { DEFAULT_STREAM_MAX_AGE_MS, DEFAULT_STREAM_MAX_BYTES, EVENTS_STREAM, NatsTransport, partitionOf } from './nats-transport';

const logger = createLogger('nats-test', 'silent');
let server: NatsServer;

beforeAll(async () => {
  server = await NatsServer.start(); // a free port: a fixed one met another checkout's run of this suite, and the two shared one stream
});

afterAll(async () => {
  await server?.stop();
});

const userId = '01900000-0000-7000-8000-000000000001';
const eventOf = (sequence: number) =>
  toCloudEvent('/users-service', { id: `01900000-0000-7000-8000-${String(sequence).padStart(12, '0')}`, type: 'user.deleted', aggregateType: 'user', aggregateId: userId, sequence, data: { id: userId }, occurredAt: new Date() });

/** As the relay does: a batch is published again until the broker acknowledges it. */
async function publishedUntilAcknowledged(producer: NatsTransport, events: ReturnType<typeof eventOf>[]): Promise<void> {
  for (const giveUpAt = Date.now() + 60_000; ; ) {
    try {
      return await producer.publish(events);
    } catch (error) {
      if (Date.now() > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

it('delivers acknowledged events in order, again after a refusal, once despite a republished batch, and resumes a durable consumer', async () => {
  const producer = await NatsTransport.connect({ servers: server.url, name: 'users-service', logger });
  const consumerSide = await NatsTransport.connect({ servers: server.url, name: 'orders-service', logger, ackWaitMs: 1_000 });
  try {
    await producer.publish([eventOf(1), eventOf(2), eventOf(3)]);
    // The relay crashed before marking: the same batch again. JetStream keeps one copy.
    await producer.publish([eventOf(1), eventOf(2), eventOf(3)]);

    const seen: string[] = [];
    let refused = false;
    const until = async (count: number) => {
      for (const giveUpAt = Date.now() + 60_000; seen.length < count && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    const subscription = { consumer: 'orders-service', sources: ['users-service'], types: ['user.deleted'] };
    const first = await consumerSide.consume(subscription, async ({ event, attempt }) => {
      if (event.aggregatesequence === 2 && !refused) {
        refused = true;
        throw new Error('not now');
      }
      seen.push(`${event.aggregatesequence}@${attempt}`);
    });
    await until(3);
    await first.stop();
    expect(seen).toEqual(['1@1', '2@2', '3@1']);

    await producer.publish([eventOf(4)]);
    const second = await consumerSide.consume(subscription, async ({ event, attempt }) => void seen.push(`${event.aggregatesequence}@${attempt}`));
    await until(4); // within the ack wait of a possibly fetched-but-stopped delivery
    await new Promise((resolve) => setTimeout(resolve, 300)); // nothing else comes
    await second.stop();
    // Handled once each. (4 may count a second delivery: the stopped consumer's last pull can
    // have fetched it unacknowledged, and JetStream hands it over again after the ack wait.)
    expect(seen.map((entry) => entry.split('@')[0])).toEqual(['1', '2', '3', '4']);
  } finally {
    await producer.close();
    await consumerSide.close();
  }
}, 180_000); // generous: the machine running it may be loaded

it('spreads aggregates over partitions handled side by side, each aggregate\'s events still in order', async () => {
  const producer = await NatsTransport.connect({ servers: server.url, name: 'catalog-service', logger });
  const consumerSide = await NatsTransport.connect({ servers: server.url, name: 'orders-service', logger });
  try {
    const aggregates = Array.from({ length: 12 }, (_, index) => `01900000-0000-7000-8000-0000000001${String(index).padStart(2, '0')}`);
    const productEvent = (productId: string, sequence: number) =>
      toCloudEvent('/catalog-service', { id: `01900000-0000-7000-8${String(sequence).padStart(3, '0')}-${productId.slice(-12)}`, type: 'product.deleted', aggregateType: 'product', aggregateId: productId, sequence, data: { id: productId, sku: 'SKU-1' }, occurredAt: new Date() });
    // Interleaved as a relay would publish them: 1 of every aggregate, then 2 of every one, ...
    await producer.publish([1, 2, 3, 4].flatMap((sequence) => aggregates.map((id) => productEvent(id, sequence))));
    expect(new Set(aggregates.map((id) => partitionOf(`product/${id}`))).size).toBeGreaterThan(1);

    const seen = new Map<string, number[]>();
    const consumption = await consumerSide.consume({ consumer: 'orders-service', sources: ['catalog-service'], types: ['product.deleted'] }, async ({ event }) => {
      const id = String(event.subject).split('/')[1];
      seen.set(id, [...(seen.get(id) ?? []), Number(event.aggregatesequence)]);
    });
    for (const giveUpAt = Date.now() + 60_000; [...seen.values()].flat().length < 48 && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 20));
    await consumption.stop();
    expect(Object.fromEntries(seen)).toEqual(Object.fromEntries(aggregates.map((id) => [id, [1, 2, 3, 4]])));
    expect(await consumerSide.pending('orders-service', 'catalog-service')).toBe(0);
  } finally {
    await producer.close();
    await consumerSide.close();
  }
}, 180_000);

it('publishes and consumes again after the broker is killed (SIGKILL) and restarted on its store, losing and doubling nothing', async () => {
  const broker = await NatsServer.start();
  const producer = await NatsTransport.connect({ servers: broker.url, name: 'users-service', logger });
  const consumerSide = await NatsTransport.connect({ servers: broker.url, name: 'orders-service', logger, ackWaitMs: 1_000 });
  const seen: number[] = [];
  const consumption = await consumerSide.consume({ consumer: 'orders-service', sources: ['users-service'], types: ['user.deleted'] }, async ({ event }) => {
    if (!seen.includes(Number(event.aggregatesequence))) seen.push(Number(event.aggregatesequence));
  });
  const publishUntilAcknowledged = (events: ReturnType<typeof eventOf>[]) => publishedUntilAcknowledged(producer, events);
  try {
    let sequence = 0;
    for (let restart = 0; restart < 8; restart++) {
      await publishUntilAcknowledged([eventOf(++sequence), eventOf(++sequence)]);
      // At a random moment: while the consumer handles, acks or waits in a pull.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 300));
      await broker.kill();
      await broker.restart();
    }
    await publishUntilAcknowledged([eventOf(++sequence)]);
    for (const giveUpAt = Date.now() + 60_000; seen.length < sequence && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual(Array.from({ length: sequence }, (_, index) => index + 1));
  } finally {
    await consumption.stop();
    await producer.close();
    await consumerSide.close();
    await broker.stop();
  }
}, 180_000);

it("after a broker restart, an event waiting for the consumer is handled at once, not only after the ack wait (a pull it gave up on while the broker was down does not keep it)", async () => {
  // The production ack wait: a message lost to a pull nobody reads any more comes back only after it.
  const ACK_WAIT_MS = 30_000;
  /** Well inside the ack wait: the property is that the event does not wait for it. */
  const HANDLED_WITHIN_MS = ACK_WAIT_MS / 2;
  const broker = await NatsServer.start();
  const producer = await NatsTransport.connect({ servers: broker.url, name: 'users-service', logger });
  // Pulls of 1 s rather than 5: the broker need only be down three of them, not eleven seconds.
  const PULL_EXPIRES_MS = 1_000;
  const consumerSide = await NatsTransport.connect({ servers: broker.url, name: 'orders-service', logger, ackWaitMs: ACK_WAIT_MS, pullExpiresMs: PULL_EXPIRES_MS });
  const seen: number[] = [];
  const consumption = await consumerSide.consume({ consumer: 'orders-service', sources: ['users-service'], types: ['user.deleted'] }, async ({ event }) => void seen.push(Number(event.aggregatesequence)));
  try {
    await producer.publish([eventOf(1)]);
    for (const giveUpAt = Date.now() + 10_000; seen.length < 1 && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 50));
    // The broker writes a consumer's acks to its store a moment later: killed before, it would deliver event 1 again after the ack wait.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await broker.kill();
    // Down longer than a pull is waited for (twice its expiry): the consumer gives its pull up and pulls again.
    await new Promise((resolve) => setTimeout(resolve, 3 * PULL_EXPIRES_MS));
    await broker.restart();
    await publishedUntilAcknowledged(producer, [eventOf(2)]);
    for (const giveUpAt = Date.now() + HANDLED_WITHIN_MS; seen.length < 2 && Date.now() < giveUpAt; ) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(seen).toEqual([1, 2]);
  } finally {
    await consumption.stop();
    await producer.close();
    await consumerSide.close();
    await broker.stop();
  }
}, 120_000);

it('waits at start for a broker that comes up after the service, instead of failing', async () => {
  const port = await freePort();
  const connecting = NatsTransport.connect({ servers: `nats://127.0.0.1:${port}`, name: 'users-service', logger, connectWithinMs: 60_000 });
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const broker = await NatsServer.start(port);
  const transport = await connecting;
  try {
    await transport.publish([eventOf(1)]);
  } finally {
    await transport.close();
    await broker.stop();
  }
}, 90_000);

it('gives up at start once the wait is over, with the reason', async () => {
  await expect(NatsTransport.connect({ servers: `nats://127.0.0.1:${await freePort()}`, name: 'users-service', logger, connectWithinMs: 1_500 })).rejects.toThrow(/CONNECTION_REFUSED|ECONNREFUSED|refused/i);
}, 30_000);

it('bounds the stream in age and size, dropping the oldest events, and brings a stream created without bounds to them', async () => {
  const broker = await NatsServer.start();
  const admin = await connect({ servers: broker.url });
  try {
    const manager = await jetstreamManager(admin);
    // As a release before the bounds created it: no max_age, no max_bytes.
    await manager.streams.add({ name: EVENTS_STREAM, subjects: ['events.>'], storage: StorageType.File, num_replicas: 1 });
    const before = (await manager.streams.info(EVENTS_STREAM)).config;
    expect([before.max_age, before.max_bytes]).toEqual([0, -1]);
    const producer = await NatsTransport.connect({ servers: broker.url, name: 'users-service', logger });
    await producer.publish([eventOf(1)]);
    await producer.close();

    const nanos = (ms: number) => ms * 1_000_000;
    // Started again with the bounds configured (NATS_STREAM_MAX_AGE_S, NATS_STREAM_MAX_BYTES).
    const bounded = await NatsTransport.connect({ servers: broker.url, name: 'users-service', logger, maxAgeMs: 2 * 24 * 3_600_000, maxBytes: 8 * 1024 });
    try {
      const after = await manager.streams.info(EVENTS_STREAM);
      expect(after.config).toMatchObject({ max_age: nanos(2 * 24 * 3_600_000), max_bytes: 8 * 1024, discard: DiscardPolicy.Old, num_replicas: 1, subjects: ['events.>'] });
      // The events it held are still there.
      expect(after.state.messages).toBe(1);
      // Full, it takes every publish and lets the oldest events go.
      for (let sequence = 2; sequence <= 60; sequence++) await bounded.publish([eventOf(sequence)]);
      const full = (await manager.streams.info(EVENTS_STREAM)).state;
      expect(full.last_seq).toBe(60);
      expect(full.first_seq).toBeGreaterThan(1);
      expect(full.bytes).toBeLessThanOrEqual(8 * 1024);
    } finally {
      await bounded.close();
    }

    // A fresh stream gets the defaults: 7 days, 1 GiB.
    await manager.streams.delete(EVENTS_STREAM);
    await (await NatsTransport.connect({ servers: broker.url, name: 'orders-service', logger })).close();
    expect((await manager.streams.info(EVENTS_STREAM)).config).toMatchObject({ max_age: nanos(DEFAULT_STREAM_MAX_AGE_MS), max_bytes: DEFAULT_STREAM_MAX_BYTES, discard: DiscardPolicy.Old });
    expect([DEFAULT_STREAM_MAX_AGE_MS, DEFAULT_STREAM_MAX_BYTES]).toEqual([7 * 24 * 3_600_000, 1024 ** 3]);
  } finally {
    await admin.close();
    await broker.stop();
  }
}, 60_000);

it("with stream: 'check' (prod's services) only reads the stream: waits for one not yet created, and leaves one of other settings as it is", async () => {
  const broker = await NatsServer.start();
  const admin = await connect({ servers: broker.url });
  try {
    await expect(NatsTransport.connect({ servers: broker.url, name: 'users-service', logger, connectWithinMs: 1_500, stream: 'check' })).rejects.toThrow(/EVENTS stream does not exist yet/);
    const manager = await jetstreamManager(admin);
    expect((await manager.streams.names().next()).length).toBe(0); // nothing created
    // The operator's step made it with its settings; a service configured otherwise reads, publishes, changes nothing.
    await (await NatsTransport.connect({ servers: broker.url, name: 'events-stream', logger, maxBytes: 8 * 1024 * 1024 })).close();
    const checking = await NatsTransport.connect({ servers: broker.url, name: 'users-service', logger, maxBytes: 16 * 1024 * 1024, replicas: 1, stream: 'check' });
    try {
      await checking.publish([eventOf(1)]);
    } finally {
      await checking.close();
    }
    expect((await manager.streams.info(EVENTS_STREAM)).config.max_bytes).toBe(8 * 1024 * 1024);
  } finally {
    await admin.close();
    await broker.stop();
  }
}, 60_000);
