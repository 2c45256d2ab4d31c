// The JetStream transport against a nats-server of its own (port 41222, a temporary store):
// acknowledged publishes, ordered delivery with explicit acks, redelivery of what a handler
// refused, duplicates of a republished batch dropped, and a durable consumer that resumes.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '@platform/service-kit';
import { toCloudEvent } from './envelope';
import { NatsTransport, partitionOf } from './nats-transport';

const PORT = 41222;
const logger = createLogger('nats-test', 'silent');
let server: ChildProcess;
let storeDir: string;

async function listening(port: number, withinMs = 10_000): Promise<void> {
  for (const giveUpAt = Date.now() + withinMs; Date.now() < giveUpAt; await new Promise((resolve) => setTimeout(resolve, 50))) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection(port, '127.0.0.1', () => (socket.end(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
  }
  throw new Error(`nats-server did not listen on ${port}`);
}

beforeAll(async () => {
  storeDir = mkdtempSync(path.join(tmpdir(), 'events-nats-'));
  server = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(PORT), '-js', '-sd', storeDir], { stdio: 'ignore' });
  await listening(PORT);
});

afterAll(() => {
  server?.kill('SIGKILL');
  rmSync(storeDir, { recursive: true, force: true });
});

const userId = '01900000-0000-7000-8000-000000000001';
const eventOf = (sequence: number) =>
  toCloudEvent('/users-service', { id: `01900000-0000-7000-8000-${String(sequence).padStart(12, '0')}`, type: 'user.deleted', aggregateType: 'user', aggregateId: userId, sequence, data: { id: userId }, occurredAt: new Date() });

it('delivers acknowledged events in order, again after a refusal, once despite a republished batch, and resumes a durable consumer', async () => {
  const producer = await NatsTransport.connect({ servers: `nats://127.0.0.1:${PORT}`, name: 'users-service', logger });
  const consumerSide = await NatsTransport.connect({ servers: `nats://127.0.0.1:${PORT}`, name: 'orders-service', logger, ackWaitMs: 1_000 });
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
  const producer = await NatsTransport.connect({ servers: `nats://127.0.0.1:${PORT}`, name: 'catalog-service', logger });
  const consumerSide = await NatsTransport.connect({ servers: `nats://127.0.0.1:${PORT}`, name: 'orders-service', logger });
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
