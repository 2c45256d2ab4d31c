#!/usr/bin/env node
// Reservations per second on one SKU: 1,000 concurrent Reserve calls over gRPC on loopback to
// inventory-service on PostgreSQL, stock 800, five rounds. Checks zero oversell every round.
// Usage: node tools/bench/inventory-reserve.mjs [rounds, default 5] [calls, default 1000]
import path from 'node:path';
import grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import pg from 'pg';
import { createDatabases, port, root, startStack, table } from './stack.mjs';

const rounds = Number(process.argv[2] ?? 5);
const calls = Number(process.argv[3] ?? 1000);
const stock = Math.floor(calls * 0.8);

const definition = grpc.loadPackageDefinition(loadSync(path.join(root, 'proto/inventory/v1/inventory.proto'), { keepCase: true }));
const databases = await createDatabases(['inventory']);
const stack = await startStack({ apps: ['inventory-service'], databases: databases.urls });
const db = new pg.Client({ connectionString: databases.urls.inventory });
await db.connect();
const client = new definition.inventory.v1.Inventory(`127.0.0.1:${port(50051)}`, grpc.credentials.createInsecure());
const reserve = (request) =>
  new Promise((resolve) => client.Reserve(request, { deadline: new Date(Date.now() + 30_000) }, (error) => resolve(error ? error.code : 0)));

try {
  await reserve({ order_id: 'warm-up', sku: 'KB-MECH-001', quantity: 1 });
  const rows = [];
  for (let round = 1; round <= rounds; round++) {
    const sku = `BENCH-${round}-${Date.now()}`;
    await db.query('INSERT INTO stock (sku, available) VALUES ($1, $2)', [sku, stock]);
    const started = process.hrtime.bigint();
    const codes = await Promise.all(Array.from({ length: calls }, (_, i) => reserve({ order_id: `bench-${round}-${i}`, sku, quantity: 1 })));
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { rows: [after] } = await db.query('SELECT available, reserved FROM stock WHERE sku = $1', [sku]);
    const ok = codes.filter((code) => code === 0).length;
    const refused = codes.filter((code) => code === grpc.status.FAILED_PRECONDITION).length;
    const other = calls - ok - refused;
    if (other) throw new Error(`round ${round}: ${other} calls failed with something other than FAILED_PRECONDITION`);
    const oversold = ok > stock || after.available < 0 || after.available + after.reserved !== stock;
    rows.push({ round, calls, stock, reserved: ok, refused, left: after.available, seconds: seconds.toFixed(3), 'calls/s': Math.round(calls / seconds), 'reservations/s': Math.round(ok / seconds), oversell: oversold ? 'YES' : 'none' });
  }
  console.log(`\n${calls} concurrent Reserve calls on one SKU per round, ${new Date().toISOString()}\n`);
  console.log(table(rows));
  const rates = rows.map((row) => row['reservations/s']).sort((a, b) => a - b);
  console.log(`\nmedian ${rates[Math.floor(rates.length / 2)]} reservations/s (target >= 2,000), oversell in ${rows.filter((row) => row.oversell !== 'none').length} of ${rounds} rounds (target 0)`);
} finally {
  client.close();
  await db.end();
  await stack.stop();
  await databases.drop();
}
