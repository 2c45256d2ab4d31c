#!/usr/bin/env node
// What tracing costs, side by side in one run (loopback only, bounded by duration): three stacks
// at once on their own ports and databases, the same calls through each gateway:
//   1. no OTLP endpoint, the default: the SDK is not started (the apps' clients carry trace ids),
//   2. OTEL_SDK_DISABLED=true: the same code path since then; a check that the default pays nothing,
//   3. a tenth of traces recorded (parentbased_traceidratio 0.1) and exported to a loopback sink,
//   4. every trace recorded and exported (the cost of sampling everything).
// Throughput in rounds that take the stacks in turn after a warm-up (medians reported), then
// one request at a time, the stacks taking turns request by request.
// Usage: node tools/bench/tracing.mjs [seconds per case and round, default 8] [rounds, default 3]
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import { Agent, createServer, request as httpRequest } from 'node:http';
import autocannon from 'autocannon';
import { createDatabases, PORT_OFFSET, startStack, table } from './stack.mjs';

const seconds = Number(process.argv[2] ?? 8);
const rounds = Number(process.argv[3] ?? 3);
const WARM_UP_SECONDS = 3;
const SETTLE_MS = 6_000;

/** An OTLP/HTTP endpoint that takes every export and counts what it got. */
const received = { exports: 0, bytes: 0 };
const sink = createServer((req, res) => {
  req.on('data', (chunk) => (received.bytes += chunk.length));
  req.on('end', () => {
    received.exports += 1;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
}).listen(PORT_OFFSET + 4318, '127.0.0.1');
const endpoint = `http://127.0.0.1:${PORT_OFFSET + 4318}`;

const setups = [
  { name: 'tracing off (no endpoint)', offset: PORT_OFFSET, env: {} },
  { name: 'SDK disabled (OTEL_SDK_DISABLED)', offset: PORT_OFFSET + 4000, env: { OTEL_SDK_DISABLED: 'true' } },
  { name: 'sampled 10 %, exported', offset: PORT_OFFSET + 1000, env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
  { name: 'sampled 100 %, exported', offset: PORT_OFFSET + 2000, env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'parentbased_always_on' } },
];

function timedRequest(request, agent) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = httpRequest(request.url, { headers: request.headers, agent }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode < 300 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function saturated(request, duration) {
  const result = await autocannon({ url: request.url, headers: request.headers, connections: 50, pipelining: 1, duration });
  if (result.non2xx || result.errors) throw new Error(`${request.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return Math.round(result.requests.average);
}

const stacks = [];
const databases = [];
try {
  for (const setup of setups) {
    const db = await createDatabases(['users', 'orders', 'catalog', 'inventory']);
    databases.push(db);
    stacks.push(await startStack({ databases: db.urls, offset: setup.offset, env: setup.env }));
  }
  // One order per stack, read back through its gateway.
  const requests = [];
  for (const setup of setups) {
    const gateway = `http://127.0.0.1:${setup.offset + 8080}`;
    const json = async (url, init = {}) => (await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...init.headers } })).json();
    const { accessToken } = await json(`${gateway}/v1/tokens`, { method: 'POST', body: JSON.stringify({ email: 'admin@example.com', password: 'admin-password' }) });
    const auth = { authorization: `Bearer ${accessToken}` };
    const product = (await json(`${gateway}/v1/products?size=1`, { headers: auth })).items[0];
    const order = await json(`${gateway}/v1/orders`, { method: 'POST', headers: auth, body: JSON.stringify({ items: [{ productId: product.id, quantity: 1 }] }) });
    requests.push({ url: `${gateway}/v1/orders/${order.id}`, headers: auth });
  }

  for (const request of requests) await saturated(request, WARM_UP_SECONDS);
  const throughput = setups.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (const [index, request] of requests.entries()) {
      // The previous case's spans leave in batches (every 5 s, OTEL_BSP_SCHEDULE_DELAY): let them go before measuring the next.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      throughput[index].push(await saturated(request, seconds));
    }
  }

  const agents = requests.map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  const samples = requests.map(() => []);
  for (let i = 0; i < 2_000; i++) for (const [index, request] of requests.entries()) samples[index].push(await timedRequest(request, agents[index]));
  for (const agent of agents) agent.destroy();

  const rows = setups.map((setup, index) => ({
    'GET /v1/orders/{id} via gateway': setup.name,
    'max req/s (median)': median(throughput[index]),
    rounds: throughput[index].join(' / '),
    'vs off': `${((median(throughput[index]) / median(throughput[0])) * 100).toFixed(0)} %`,
    'p50 ms 1-at-a-time': median(samples[index]).toFixed(2),
  }));
  console.log(`\n${seconds} s per case and round, ${rounds} rounds, ${new Date().toISOString()}\n`);
  console.log(table(rows));
  const perRound = throughput[2].map((value, round) => (value / throughput[0][round]) * 100);
  console.log(`\nsampling 10 % keeps ${median(perRound).toFixed(0)} % of the throughput without tracing, median of rounds ${perRound.map((ratio) => ratio.toFixed(0)).join(' / ')} % (target >= 90 %)`);
  console.log(`the sink received ${received.exports} exports, ${(received.bytes / 1024).toFixed(0)} KiB`);
} finally {
  for (const stack of stacks) await stack.stop();
  for (const db of databases) await db.drop();
  sink.close();
}
