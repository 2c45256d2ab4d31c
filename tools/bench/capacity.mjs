#!/usr/bin/env node
// Per-replica capacity: how many requests one core of each app serves, from the CPU time each
// process spends (/proc), not from wall-clock throughput, which on a shared host depends on what
// else runs. The stack runs in production mode on fresh PostgreSQL databases and the local Redis;
// each case is driven by autocannon for a few seconds, and every app's CPU time is read before
// and after. Cases: a simple read on each service directly, the same read through the gateway,
// and order placement through the gateway (a whole placement: gateway, orders, catalog prices,
// inventory reservation).
// Usage: node tools/bench/capacity.mjs [seconds per case, default 8] [connections, default 16]
// BENCH_PORT_OFFSET moves the apps' ports (default that of stack.mjs).
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import autocannon from 'autocannon';
import { cpuMsOf, createDatabases, PORT_OFFSET, startStack, table } from './stack.mjs';

const seconds = Number(process.argv[2] ?? 8);
const connections = Number(process.argv[3] ?? 16);
const offset = Number(process.env.BENCH_PORT_OFFSET ?? PORT_OFFSET);
const url = (base, path) => `http://127.0.0.1:${base + offset}${path}`;
const APPS = ['gateway', 'users-service', 'orders-service', 'catalog-service', 'inventory-service'];

async function json(target, init = {}) {
  const res = await fetch(target, { ...init, headers: { 'content-type': 'application/json', ...init.headers } });
  const body = await res.json();
  if (res.status >= 300) throw new Error(`${init.method ?? 'GET'} ${target}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  return body;
}

async function measure(pids, name, request) {
  await autocannon({ ...request, duration: 2, connections }); // warm-up
  const before = Object.fromEntries(APPS.map((app) => [app, cpuMsOf(pids[app])]));
  const result = await autocannon({ ...request, duration: seconds, connections });
  if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  const requests = result.requests.total;
  const cpuMs = Object.fromEntries(APPS.map((app) => [app, (cpuMsOf(pids[app]) - before[app]) / requests]));
  return { name, requests, perSecond: requests / seconds, cpuMs };
}

const databases = await createDatabases(['users', 'orders', 'catalog', 'inventory']);
const stack = await startStack({ databases: databases.urls, offset });
try {
  const gateway = (path) => url(8080, path);
  const { accessToken: admin } = await json(gateway('/v1/tokens'), { method: 'POST', body: JSON.stringify({ email: 'admin@example.com', password: 'admin-password' }) });
  const auth = { authorization: `Bearer ${admin}` };
  const { items: products } = await json(gateway('/v1/products?size=5'), { headers: auth });
  const product = products[0];
  // Enough stock that placement never runs out during the run.
  for (const { sku } of products) await json(gateway(`/v1/stock-levels/${sku}`), { method: 'PUT', headers: auth, body: JSON.stringify({ onHand: 1_000_000 }) });
  const me = await json(gateway('/v1/users?size=1'), { headers: auth });
  const order = await json(gateway('/v1/orders'), { method: 'POST', headers: auth, body: JSON.stringify({ items: [{ productId: product.id, quantity: 1 }] }) });

  const cases = [
    ['users-service: GET /users/{id}', { url: url(3001, `/users/${me.items[0].id}`), headers: auth }, 'users-service'],
    ['orders-service: GET /orders/{id}', { url: url(3002, `/orders/${order.id}`), headers: auth }, 'orders-service'],
    ['catalog-service: GET /products/{id}', { url: url(3003, `/products/${product.id}`), headers: auth }, 'catalog-service'],
    ['inventory-service: GET /stock-levels/{sku}', { url: url(3004, `/stock-levels/${product.sku}`), headers: auth }, 'inventory-service'],
    ['gateway: GET /v1/products/{id}', { url: gateway(`/v1/products/${product.id}`), headers: auth }, 'gateway'],
    ['placement: POST /v1/orders (1 item)', { url: gateway('/v1/orders'), method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ items: [{ productId: product.id, quantity: 1 }] }) }, 'orders-service'],
  ];
  const rows = [];
  for (const [name, request, focus] of cases) {
    const measured = await measure(stack.pids, name, request);
    rows.push({
      case: name,
      'req/s (wall)': measured.perSecond.toFixed(0),
      'CPU ms/req': measured.cpuMs[focus].toFixed(2),
      'req/s per core': (1000 / measured.cpuMs[focus]).toFixed(0),
      ...Object.fromEntries(APPS.map((app) => [`${app.replace('-service', '')} ms`, measured.cpuMs[app].toFixed(2)])),
    });
  }
  console.log(`\n${seconds} s per case, ${connections} connections, NODE_ENV=production, PostgreSQL + Redis, ${new Date().toISOString()}`);
  console.log('CPU ms/req is the CPU time of the app the case is about, per request; the last columns give every app\'s.\n');
  console.log(table(rows));
} finally {
  await stack.stop();
  await databases.drop();
}
