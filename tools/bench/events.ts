// Relay lag of domain events, commit to consumer, on PostgreSQL and NATS JetStream: a writer
// commits `rate` events a second (each its own transaction, as a use case does) for `seconds`;
// the relay publishes them; a JetStream consumer receives them. Prints p50/p99/max of
// (received - written) and the events/s delivered. Runs a nats-server of its own on port 41224.
// Usage: node tools/ts-run.mjs tools/bench/events.ts [rate, default 500] [seconds, default 20]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openTestDatabase } from '@platform/db/testing';
import { domainEvent, NatsTransport, recordEvent, startOutboxRelay } from '@platform/events';
import { createLogger } from '@platform/service-kit';
// The bench reads orders-service's migrations and client, as its database is one of those.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { PrismaClient } from '../../apps/orders-service/src/generated/prisma/client';

const NATS_PORT = 41224;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function main(): Promise<void> {
  const rate = Number(process.argv[2] ?? 500);
  const seconds = Number(process.argv[3] ?? 20);
  process.env.TEST_DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/postgres';
  const store = mkdtempSync(path.join(tmpdir(), 'bench-events-nats-'));
  const nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(NATS_PORT), '-js', '-sd', store], { stdio: 'ignore' });
  const logger = createLogger('bench-events', 'warn');
  const database = await openTestDatabase({ service: 'bench_events', migrationsDir: path.resolve(__dirname, '../../apps/orders-service/prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }), poolSize: 20 });
  try {
    await sleep(500);
    const servers = `nats://127.0.0.1:${NATS_PORT}`;
    const producer = await NatsTransport.connect({ servers, name: 'bench-producer', logger });
    const consumer = await NatsTransport.connect({ servers, name: 'bench-consumer', logger });
    const relay = await startOutboxRelay(database, producer, logger, { service: 'bench-service', pollMs: 500 });
    const lags: number[] = [];
    const consumption = await consumer.consume({ consumer: 'bench', sources: ['bench-service'], types: ['order.deleted'] }, async ({ event }) => {
      lags.push(Date.now() - Date.parse(String(event.time)));
    });
    const total = rate * seconds;
    const started = Date.now();
    const writes: Promise<unknown>[] = [];
    for (let index = 0; index < total; index++) {
      // Open loop: the next write starts on schedule whether or not the last one finished.
      const due = started + (index * 1000) / rate;
      if (due > Date.now()) await sleep(due - Date.now());
      const id = `01a20000-0000-7000-8000-${String(index).padStart(12, '0')}`;
      writes.push(database.prisma.$transaction((tx) => recordEvent(tx, domainEvent('order.deleted', id, { id, userId: null }))));
    }
    await Promise.all(writes);
    for (const giveUpAt = Date.now() + 60_000; lags.length < total && Date.now() < giveUpAt; ) await sleep(50);
    const elapsed = (Date.now() - started) / 1000;
    await consumption.stop();
    await relay.stop();
    await producer.close();
    await consumer.close();
    const sorted = [...lags].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
    console.log(JSON.stringify({ offeredPerSecond: rate, seconds, written: total, received: lags.length, deliveredPerSecond: Math.round(lags.length / elapsed), lagMs: { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) } }));
  } finally {
    await database.close();
    nats.kill('SIGKILL');
    rmSync(store, { recursive: true, force: true });
  }
}
