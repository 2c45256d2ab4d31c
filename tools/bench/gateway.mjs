#!/usr/bin/env node
// Gateway overhead, side by side in one run (loopback only, bounded by duration):
//   1. a bare Node http JSON server (the machine's ceiling),
//   2. catalog-service called directly: GET /products/{id} with a bearer token,
//   3. the same call through the gateway (auth + Redis rate limiter on),
//   4. GraphQL order(id) across three subgraphs through the gateway, against the REST GET /v1/orders/{id}.
// Each case runs three ways: at saturation (50 connections) for throughput; one request at a
// time (400 requests) for the latency of a call with no queueing; and at a fixed 50 req/s, where
// a 2-core machine shared by the load generator and every server adds some queueing.
// Usage: node tools/bench/gateway.mjs [seconds per case, default 10]
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import { Agent, createServer, request as httpRequest } from 'node:http';
import autocannon from 'autocannon';
import { createDatabases, port, startStack, table } from './stack.mjs';

const seconds = Number(process.argv[2] ?? 10);
const FIXED_RATE = 50;

async function run(name, request, options) {
  const result = await autocannon({ pipelining: 1, ...(options.amount ? {} : { duration: seconds }), ...options, ...request });
  if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result;
}

/** One request at a time over a keep-alive connection, timed to the microsecond (autocannon reports whole ms). */
async function serialLatency(request, count = 400) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const req = httpRequest(request.url, { method: request.method ?? 'GET', headers: request.headers, agent }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode < 300 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`status ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(request.body);
    });
  for (let i = 0; i < 50; i++) await once();
  const samples = [];
  for (let i = 0; i < count; i++) samples.push(await once());
  agent.destroy();
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(count * 0.5)], p99: samples[Math.floor(count * 0.99)] };
}

async function measure(name, request) {
  const saturated = await run(name, request, { connections: 50 });
  const serial = await serialLatency(request);
  const paced = await run(name, request, { connections: 10, overallRate: FIXED_RATE });
  return {
    case: name,
    'max req/s': Math.round(saturated.requests.average),
    'p50 ms 1-at-a-time': serial.p50.toFixed(2),
    'p99 ms 1-at-a-time': serial.p99.toFixed(2),
    [`p50 ms @${FIXED_RATE}/s`]: paced.latency.p50,
    [`p99 ms @${FIXED_RATE}/s`]: paced.latency.p99,
  };
}

const databases = await createDatabases(['users', 'orders', 'catalog', 'inventory']);
const stack = await startStack({ databases: databases.urls });
try {
  const gateway = `http://127.0.0.1:${port(8080)}`;
  const json = async (url, init = {}) => (await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...init.headers } })).json();
  const { accessToken } = await json(`${gateway}/v1/tokens`, { method: 'POST', body: JSON.stringify({ email: 'admin@example.com', password: 'admin-password' }) });
  const auth = { authorization: `Bearer ${accessToken}` };
  const product = (await json(`${gateway}/v1/products?size=1`, { headers: auth })).items[0];
  const order = await json(`${gateway}/v1/orders`, { method: 'POST', headers: auth, body: JSON.stringify({ items: [{ productId: product.id, quantity: 1 }] }) });

  const body = JSON.stringify(product);
  const bare = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body)).listen(port(9000), '127.0.0.1');
  const rows = [];
  rows.push(await measure('bare node http (ceiling)', { url: `http://127.0.0.1:${port(9000)}/` }));
  rows.push(await measure('catalog direct GET /products/{id}', { url: `http://127.0.0.1:${port(3003)}/products/${product.id}`, headers: auth }));
  rows.push(await measure('via gateway GET /v1/products/{id}', { url: `${gateway}/v1/products/${product.id}`, headers: auth }));
  rows.push(await measure('via gateway GET /v1/orders/{id}', { url: `${gateway}/v1/orders/${order.id}`, headers: auth }));
  const query = JSON.stringify({ query: `{ order(id: "${order.id}") { id amount user { name } product { name imageUrl rating } shipment { status } reviewCount } }` });
  rows.push(await measure('via gateway GraphQL order(id)', { url: `${gateway}/v1/graphql`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: query }));
  bare.close();

  const [, direct, proxied, rest, graphql] = rows;
  const p50 = 'p50 ms 1-at-a-time';
  const p99 = 'p99 ms 1-at-a-time';
  console.log(`\n${seconds} s per case and mode, ${new Date().toISOString()}\n`);
  console.log(table(rows));
  console.log(`\ngateway keeps ${((proxied['max req/s'] / direct['max req/s']) * 100).toFixed(0)} % of direct throughput (target >= 70 %) and adds ${(proxied[p99] - direct[p99]).toFixed(1)} ms at p99 (target < 3 ms)`);
  console.log(`GraphQL order(id) takes ${(graphql[p50] / rest[p50]).toFixed(1)}x the p50 of REST GET /v1/orders/{id} one at a time, ${(graphql[`p50 ms @${FIXED_RATE}/s`] / rest[`p50 ms @${FIXED_RATE}/s`]).toFixed(1)}x at ${FIXED_RATE}/s (target <= 3x)`);
} finally {
  await stack.stop();
  await databases.drop();
}
