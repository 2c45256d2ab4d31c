// Relay lag of domain events, commit to consumer, on PostgreSQL, side by side: the mechanism as it
// was (a NOTIFY per write wakes the relay; one JetStream subject and durable consumer per
// producer; the embedded log read every poll) and as it is (the unit of work wakes the relay in
// process; 16 partitions by aggregate, each with its durable consumer; the embedded log read by
// long poll). For each, a writer commits `rate` events a second (each its own transaction, as a
// use case does; open loop) for `seconds` into a throwaway database; the relay publishes them; a
// consumer receives them. Each variant first writes for 2 s at the same rate (the warm-up: a
// relay, a pool and a consumer just started open their connections and compile their code, and
// those seconds' events wait for it), then for `seconds` (the measured, steady window). Prints
// p50/p99/max of (received - written) for both, where the measured events' time went (commit:
// the write's transaction; relay pick-up: commit to the relay's publish call; publish ack: to the
// transport's acknowledgement; consumer receive: to the consumer's handler), the events/s
// delivered, and the ratios. Runs a nats-server of its own (port BENCH_NATS_PORT, default 41224) and serves
// the embedded log on 127.0.0.1 at an ephemeral port.
// Usage: node tools/ts-run.mjs tools/bench/events.ts [rate, default 500] [seconds, default 15] [only: nats|embedded]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { serviceTokenSource, TokenVerifier } from '@platform/auth';
import { openTestDatabase } from '@platform/db/testing';
import { domainEvent, EmbeddedTransport, eventLogRoutes, type EventTransport, NatsTransport, recordEvent, sqlCursorStore, startOutboxRelay, unitOfWork } from '@platform/events';
import { createLogger, listen } from '@platform/service-kit';
import express from 'express';
// The bench reads orders-service's migrations and client, as its database is one of those.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { PrismaClient } from '../../apps/orders-service/src/generated/prisma/client';

const NATS_PORT = Number(process.env.BENCH_NATS_PORT ?? 41224);
const SECRET = 'bench-events-secret-bench-events-secret-0';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const logger = createLogger('bench-events', 'warn');

interface Variant {
  name: string;
  transport: 'nats' | 'embedded';
  /** `notify`: the write sends pg_notify and the relay LISTENs (before); `unit-of-work`: the in-process wake (now). */
  wake: 'notify' | 'unit-of-work';
  /** NATS: partitions per producer (1 = before). Embedded: the long poll's wait (0 = before: a read every poll). */
  partitions?: number;
  waitMs?: number;
}

interface Lag {
  p50: number;
  p99: number;
  max: number;
}

interface Result {
  variant: string;
  written: number;
  failedWrites: number;
  received: number;
  deliveredPerSecond: number;
  /** The measured window, after the warm-up: the steady state. */
  lagMs: Lag;
  /** The warm-up's events: the first seconds of a relay, a pool and a consumer just started. */
  warmUpLagMs: Lag;
  /** Where the measured events' time went (p50/p99 of each stage), for the stages the bench sees. */
  stagesMs: Record<'commit' | 'relayPickUp' | 'publishAck' | 'consumerReceive', Lag>;
}

/** The moments the bench sees of one event. */
interface Moments {
  committed?: number;
  picked?: number;
  acked?: number;
  received?: number;
  written?: number;
}

const WARM_UP_SECONDS = 2;

function lagOf(values: number[]): Lag {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
}

async function measure(variant: Variant, rate: number, seconds: number, natsUrl: string): Promise<Result> {
  const service = `bench-${variant.name}`;
  const database = await openTestDatabase({ service: service.replace(/-/g, '_'), migrationsDir: path.resolve(__dirname, '../../apps/orders-service/prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }), poolSize: 20 });
  const closers: (() => Promise<unknown>)[] = [];
  const moments = new Map<string, Moments>();
  const momentsOf = (subject: unknown) => {
    const id = String(subject).replace(/^order\//, '');
    let found = moments.get(id);
    if (!found) moments.set(id, (found = {}));
    return found;
  };
  try {
    let transport: EventTransport;
    let consumer: EventTransport;
    if (variant.transport === 'nats') {
      transport = await NatsTransport.connect({ servers: natsUrl, name: `${service}-producer`, logger, partitions: variant.partitions });
      consumer = await NatsTransport.connect({ servers: natsUrl, name: `${service}-consumer`, logger, partitions: variant.partitions });
      closers.push(() => transport.close(), () => consumer.close());
    } else {
      const app = express();
      app.use(eventLogRoutes(database.prisma, service, new TokenVerifier([SECRET], { audience: 'internal' })));
      const server = await listen(app, 0, '127.0.0.1');
      closers.push(() => server.close());
      transport = new EmbeddedTransport({ producers: {}, serviceToken: serviceTokenSource(SECRET, service), logger });
      // EVENTS_POLL_MS's default: how often the log was read before the long poll.
      consumer = new EmbeddedTransport({ producers: { [service]: server.url }, serviceToken: serviceTokenSource(SECRET, 'bench-consumer'), cursors: sqlCursorStore(database.prisma), logger, pollMs: 500, waitMs: variant.waitMs });
    }
    // The relay's transport, seen from outside: when it took a batch (relay pick-up) and when the
    // transport acknowledged it (for the embedded transport the same moment: the mark publishes).
    const producer: EventTransport = {
      kind: transport.kind,
      publish: async (events) => {
        const picked = Date.now();
        await transport.publish(events);
        const acked = Date.now();
        for (const event of events) Object.assign(momentsOf(event.subject), { picked, acked });
      },
      consume: (subscription, handle) => transport.consume(subscription, handle),
      close: () => transport.close(),
    };
    // Before, NOTIFY woke the relay: it listens on the channel, as it still does for SQL triggers.
    const relay = await startOutboxRelay(variant.wake === 'notify' ? database : { prisma: database.prisma }, producer, logger, { service, pollMs: 500 });
    closers.unshift(() => relay.stop());
    const consumption = await consumer.consume({ consumer: 'bench', sources: [service], types: ['order.deleted'] }, async ({ event }) => {
      Object.assign(momentsOf(event.subject), { received: Date.now(), written: Date.parse(String(event.time)) });
    });
    closers.unshift(() => consumption.stop());

    /** Commits `rate` events a second for `phaseSeconds`, open loop; returns the ids written. */
    const writePhase = async (prefix: string, phaseSeconds: number) => {
      const total = rate * phaseSeconds;
      const ids: string[] = [];
      let failed = 0;
      const started = Date.now();
      const writes: Promise<unknown>[] = [];
      for (let index = 0; index < total; index++) {
        // Open loop: the next write starts on schedule whether or not the last one finished.
        const due = started + (index * 1000) / rate;
        if (due > Date.now()) await sleep(due - Date.now());
        const id = `${prefix}-0000-7000-8000-${String(index).padStart(12, '0')}`;
        const event = domainEvent('order.deleted', id, { id, userId: null });
        const write =
          variant.wake === 'notify'
            ? database.prisma.$transaction(async (tx) => {
                await recordEvent(tx, event);
                await tx.$executeRawUnsafe(`SELECT pg_notify('outbox_events', '')`);
              }, { maxWait: 10_000 })
            : unitOfWork(database.prisma, (tx) => recordEvent(tx, event), { maxWait: 10_000 });
        // A write the loaded machine could not start in time is counted, not fatal.
        writes.push(
          write.then(
            () => {
              momentsOf(`order/${id}`).committed = Date.now();
              ids.push(id);
            },
            () => failed++,
          ),
        );
      }
      await Promise.all(writes);
      const receivedAll = () => ids.every((id) => moments.get(id)?.received !== undefined);
      for (const giveUpAt = Date.now() + 60_000; !receivedAll() && Date.now() < giveUpAt; ) await sleep(50);
      return { ids, failed, elapsed: (Date.now() - started) / 1000 };
    };
    // The first seconds of a relay, a pool and a consumer just started are measured apart: their
    // connections open, their code is compiled, and the events of those seconds wait for it.
    const warmUp = await writePhase('01a2ffff', WARM_UP_SECONDS);
    const measured = await writePhase('01a20000', seconds);
    const seen = (ids: string[]) => ids.map((id) => moments.get(id) as Moments).filter((moment) => moment.received !== undefined);
    const lagsOf = (ids: string[]) => seen(ids).map((moment) => (moment.received as number) - (moment.written as number));
    const complete = seen(measured.ids).filter((moment) => moment.committed !== undefined && moment.picked !== undefined);
    const stage = (from: keyof Moments, to: keyof Moments) => lagOf(complete.map((moment) => (moment[to] as number) - (moment[from] as number)));
    const received = seen(measured.ids).length;
    return {
      variant: variant.name,
      written: measured.ids.length,
      failedWrites: measured.failed,
      received,
      deliveredPerSecond: Math.round(received / measured.elapsed),
      lagMs: lagOf(lagsOf(measured.ids)),
      warmUpLagMs: lagOf(lagsOf(warmUp.ids)),
      stagesMs: { commit: stage('written', 'committed'), relayPickUp: stage('committed', 'picked'), publishAck: stage('picked', 'acked'), consumerReceive: stage('acked', 'received') },
    };
  } finally {
    for (const close of closers) await close().catch(() => undefined);
    await database.close();
  }
}

export async function main(): Promise<void> {
  const rate = Number(process.argv[2] ?? 500);
  const seconds = Number(process.argv[3] ?? 15);
  const only = process.argv[4];
  process.env.TEST_DATABASE_URL ??= 'postgresql://postgres@127.0.0.1:5432/postgres';
  const store = mkdtempSync(path.join(tmpdir(), 'bench-events-nats-'));
  const nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(NATS_PORT), '-js', '-sd', store], { stdio: 'ignore' });
  try {
    await sleep(500);
    const variants: Variant[] = [
      { name: 'nats-before', transport: 'nats', wake: 'notify', partitions: 1 },
      { name: 'nats-now', transport: 'nats', wake: 'unit-of-work' },
      { name: 'embedded-before', transport: 'embedded', wake: 'notify', waitMs: 0 },
      { name: 'embedded-now', transport: 'embedded', wake: 'unit-of-work' },
    ].filter((variant) => !only || variant.transport === only) as Variant[];
    const results: Result[] = [];
    for (const variant of variants) {
      const result = await measure(variant, rate, seconds, `nats://127.0.0.1:${NATS_PORT}`);
      console.log(JSON.stringify({ offeredPerSecond: rate, seconds, ...result }));
      results.push(result);
    }
    for (const transport of ['nats', 'embedded']) {
      const before = results.find((result) => result.variant === `${transport}-before`);
      const now = results.find((result) => result.variant === `${transport}-now`);
      if (before && now) console.log(`${transport}: p50 ${before.lagMs.p50} -> ${now.lagMs.p50} ms (${(before.lagMs.p50 / Math.max(1, now.lagMs.p50)).toFixed(1)}x), p99 ${before.lagMs.p99} -> ${now.lagMs.p99} ms (${(before.lagMs.p99 / Math.max(1, now.lagMs.p99)).toFixed(1)}x)`);
    }
  } finally {
    nats.kill('SIGKILL');
    rmSync(store, { recursive: true, force: true });
  }
}
