#!/usr/bin/env node
// Inventory over gRPC on loopback, against inventory-service on PostgreSQL, all in one run:
//   1. unary Reserve: 1,000 concurrent calls of 1 on one SKU with stock 800 per round; zero oversell;
//   2. ReserveStream against unary Reserve: the same reservations (1 each, spread over 10 SKUs),
//      once as unary calls (1,000 in flight) and once on one bidirectional stream, alternating;
//   3. ReserveOrder: orders/s for orders of 3 lines (SKUs drawn from 50), 100 orders in flight;
//   4. WatchStock: 1,000 concurrent watchers of one SKU; for each stock change (AdjustStock), the
//      time from sending the change to the moment the last watcher has seen it (p50, p99).
// Usage: node tools/bench/inventory-reserve.mjs [rounds, default 3] [calls, default 1000]
import path from 'node:path';
import grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { SignJWT } from 'jose';
import pg from 'pg';
import { createDatabases, port, root, startStack, table } from './stack.mjs';

const rounds = Number(process.argv[2] ?? 3);
const calls = Number(process.argv[3] ?? 1000);
const stock = Math.floor(calls * 0.8);
const STREAM_RESERVATIONS = 10_000;
const ORDERS = 2_000;
const ORDERS_IN_FLIGHT = 100;
const WATCHERS = 1_000;
const CHANGES = 50;

const definition = grpc.loadPackageDefinition(loadSync(path.join(root, 'proto/inventory/v1/inventory.proto'), { keepCase: true }));
const databases = await createDatabases(['inventory']);
const stack = await startStack({ apps: ['inventory-service'], databases: databases.urls });
const db = new pg.Client({ connectionString: databases.urls.inventory });
await db.connect();
// The token orders-service sends (inventory refuses callers without one): see libs/auth.
const token = await new SignJWT({ role: 'service' })
  .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
  .setSubject('orders-service')
  .setIssuer('order-platform')
  .setAudience('order-platform-internal')
  .setIssuedAt()
  .setExpirationTime('1h')
  .sign(new TextEncoder().encode(stack.jwtSecret));
const address = `127.0.0.1:${port(50051)}`;
// Sent on every call, as orders-service does.
const metadata = () => {
  const m = new grpc.Metadata();
  m.set('authorization', `Bearer ${token}`);
  return m;
};
const client = new definition.inventory.v1.Inventory(address, grpc.credentials.createInsecure());
const deadline = (ms = 60_000) => ({ deadline: new Date(Date.now() + ms) });
const reserve = (request) => new Promise((resolve) => client.Reserve(request, metadata(), deadline(), (error) => resolve(error ? error.code : 0)));
const seconds = (started) => Number(process.hrtime.bigint() - started) / 1e9;
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const newSkus = async (prefix, count, available) => {
  const skus = Array.from({ length: count }, (_, i) => `${prefix}-${i}-${Date.now()}`);
  await db.query('INSERT INTO stock (sku, available) SELECT unnest($1::text[]), $2', [skus, available]);
  return skus;
};

try {
  await reserve({ order_id: 'warm-up', sku: 'KB-MECH-001', quantity: 1 });

  // 1. Unary Reserve on one SKU: throughput and zero oversell.
  const unaryRows = [];
  for (let round = 1; round <= rounds; round++) {
    const [sku] = await newSkus(`BENCH-${round}`, 1, stock);
    const started = process.hrtime.bigint();
    const codes = await Promise.all(Array.from({ length: calls }, (_, i) => reserve({ order_id: `bench-${round}-${i}`, sku, quantity: 1 })));
    const elapsed = seconds(started);
    const { rows: [after] } = await db.query('SELECT available, reserved FROM stock WHERE sku = $1', [sku]);
    const ok = codes.filter((code) => code === 0).length;
    const refused = codes.filter((code) => code === grpc.status.FAILED_PRECONDITION).length;
    if (calls - ok - refused) throw new Error(`round ${round}: ${calls - ok - refused} calls failed with something other than FAILED_PRECONDITION (first: ${codes.find((code) => code !== 0 && code !== grpc.status.FAILED_PRECONDITION)})`);
    const oversold = ok > stock || after.available < 0 || after.available + after.reserved !== stock;
    unaryRows.push({ round, calls, stock, reserved: ok, refused, left: after.available, seconds: elapsed.toFixed(3), 'reservations/s': Math.round(ok / elapsed), oversell: oversold ? 'YES' : 'none' });
  }
  console.log(`\n1. ${calls} concurrent unary Reserve calls on one SKU per round, ${new Date().toISOString()}\n`);
  console.log(table(unaryRows));

  // 2. ReserveStream against unary Reserve: the same work, alternating, in this run.
  const streamRows = [];
  for (let round = 1; round <= rounds; round++) {
    for (const shape of ['unary Reserve', 'ReserveStream']) {
      const skus = await newSkus(`CMP-${round}-${shape[0]}`, 10, STREAM_RESERVATIONS);
      const requests = Array.from({ length: STREAM_RESERVATIONS }, (_, i) => ({ order_id: `cmp-${round}-${shape[0]}-${i}`, sku: skus[i % skus.length], quantity: 1 }));
      const started = process.hrtime.bigint();
      let ok = 0;
      if (shape === 'unary Reserve') {
        for (let from = 0; from < requests.length; from += calls) {
          const codes = await Promise.all(requests.slice(from, from + calls).map(reserve));
          ok += codes.filter((code) => code === 0).length;
        }
      } else {
        ok = await new Promise((resolve, reject) => {
          const stream = client.ReserveStream(metadata(), deadline());
          let granted = 0;
          stream.on('data', (reply) => {
            if (!reply.error) granted += 1;
          });
          stream.on('error', reject);
          stream.on('end', () => resolve(granted));
          for (const request of requests) stream.write(request);
          stream.end();
        });
      }
      const elapsed = seconds(started);
      if (ok !== requests.length) throw new Error(`${shape} round ${round}: ${requests.length - ok} reservations refused`);
      streamRows.push({ round, shape, reservations: ok, seconds: elapsed.toFixed(3), 'reservations/s': Math.round(ok / elapsed) });
    }
  }
  console.log(`\n2. ${STREAM_RESERVATIONS} reservations of 1 over 10 SKUs: unary Reserve (${calls} in flight) against one ReserveStream\n`);
  console.log(table(streamRows));
  const streamRate = median(streamRows.filter((row) => row.shape === 'ReserveStream').map((row) => row['reservations/s']));
  const unaryRate = median(streamRows.filter((row) => row.shape === 'unary Reserve').map((row) => row['reservations/s']));

  // 3. ReserveOrder: whole orders of 3 lines, all or nothing.
  const orderRows = [];
  for (let round = 1; round <= rounds; round++) {
    const skus = await newSkus(`ORD-${round}`, 50, ORDERS);
    let next = 0;
    let reserved = 0;
    let refused = 0;
    const placeOne = () =>
      new Promise((resolve) => {
        const i = next++;
        const picked = new Set();
        while (picked.size < 3) picked.add(skus[Math.floor(Math.random() * skus.length)]);
        const call = client.ReserveOrder(metadata(), deadline(), (error) => {
          if (!error) reserved += 1;
          else if (error.code === grpc.status.FAILED_PRECONDITION) refused += 1;
          else throw new Error(`ReserveOrder failed: ${error.code} ${error.details}`);
          resolve();
        });
        for (const sku of picked) call.write({ order_id: `ord-${round}-${i}`, sku, quantity: 1 + (i % 3) });
        call.end();
      });
    const worker = async () => {
      while (next < ORDERS) await placeOne();
    };
    const started = process.hrtime.bigint();
    await Promise.all(Array.from({ length: ORDERS_IN_FLIGHT }, worker));
    const elapsed = seconds(started);
    const { rows: [partial] } = await db.query(`SELECT count(*)::int AS orders FROM (SELECT order_id FROM reservations WHERE order_id LIKE $1 GROUP BY order_id HAVING count(*) <> 3) AS p`, [`ord-${round}-%`]);
    orderRows.push({ round, orders: ORDERS, reserved, refused, 'partly reserved': partial.orders, seconds: elapsed.toFixed(3), 'orders/s': Math.round(ORDERS / elapsed), 'lines/s': Math.round((3 * ORDERS) / elapsed) });
  }
  console.log(`\n3. ReserveOrder: ${ORDERS} orders of 3 lines (SKUs drawn from 50), ${ORDERS_IN_FLIGHT} in flight\n`);
  console.log(table(orderRows));

  // 4. WatchStock: 1,000 watchers of one SKU, one stock change at a time.
  const [watched] = await newSkus('WATCH', 1, 1_000_000);
  // Several channels, as several client processes would open: one HTTP/2 connection each.
  const channels = Array.from({ length: 10 }, () => new definition.inventory.v1.Inventory(address, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }));
  const seen = new Map(); // available -> watchers that have seen it
  const waiting = new Map(); // available -> resolve when all watchers saw it
  const watchers = [];
  let firstLevels = 0;
  await new Promise((resolve, reject) => {
    for (let w = 0; w < WATCHERS; w++) {
      const stream = channels[w % channels.length].WatchStock({ skus: [watched] }, metadata());
      let first = true;
      stream.on('data', (level) => {
        if (first) {
          first = false;
          if (++firstLevels === WATCHERS) resolve();
          return;
        }
        const count = (seen.get(level.available) ?? 0) + 1;
        seen.set(level.available, count);
        if (count === WATCHERS) waiting.get(level.available)?.();
      });
      stream.on('error', (error) => {
        if (error.code !== grpc.status.CANCELLED) reject(error);
      });
      watchers.push(stream);
    }
  });
  const latencies = [];
  let available = 1_000_000;
  for (let change = 1; change <= CHANGES; change++) {
    available -= 1;
    const allSaw = new Promise((resolve) => waiting.set(available, resolve));
    const started = process.hrtime.bigint();
    await new Promise((resolve, reject) => client.AdjustStock({ sku: watched, delta: -1, reason: 'bench', request_id: `watch-${change}-${Date.now()}` }, metadata(), deadline(), (error) => (error ? reject(error) : resolve())));
    await allSaw;
    latencies.push(seconds(started) * 1000);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (const stream of watchers) stream.cancel();
  for (const channel of channels) channel.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(`\n4. WatchStock: ${WATCHERS} watchers of one SKU; ${CHANGES} changes (AdjustStock), one at a time`);
  console.log(`   from sending the change to the last watcher seeing it: p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms, max ${sorted.at(-1).toFixed(1)} ms`);

  const rates = unaryRows.map((row) => row['reservations/s']);
  console.log('\nSummary');
  console.log(`  unary Reserve, one SKU: median ${median(rates)} reservations/s, oversell in ${unaryRows.filter((row) => row.oversell !== 'none').length} of ${rounds} rounds`);
  console.log(`  ReserveStream ${streamRate} reservations/s against unary Reserve ${unaryRate} (same run): ${(streamRate / unaryRate).toFixed(2)}x`);
  console.log(`  ReserveOrder: median ${median(orderRows.map((row) => row['orders/s']))} orders/s of 3 lines, partly reserved orders: ${orderRows.reduce((sum, row) => sum + row['partly reserved'], 0)}`);
  console.log(`  WatchStock, ${WATCHERS} watchers: change to last watcher p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms`);
} finally {
  client.close();
  await db.end();
  await stack.stop();
  await databases.drop();
}
