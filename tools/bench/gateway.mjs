#!/usr/bin/env node
// Gateway overhead, side by side in one run (loopback only, bounded by duration):
//   1. a bare Node http JSON server (the machine's ceiling),
//   2. catalog-service called directly: GET /products/{id} with a bearer token,
//   3. the same call through a minimal Node proxy (the floor of any hop on this host),
//   4. the same call through the gateway (every feature on, see FEATURES_ENV),
//   5. GraphQL order(id) across three subgraphs through the gateway, against the REST GET /v1/orders/{id}.
// Then compression: a 100-product page through the gateway as identity, gzip and br, with the
// bytes on the wire, the gateway's CPU per request and throughput, side by side.
// Each case runs three ways: at saturation (50 connections) for throughput; one request at a
// time (2,000 requests, the cases taking turns) for the latency of a call with no queueing; and at
// an even 50 req/s (one request every 20 ms, open loop), where a 2-core machine shared by the load
// generator and every server adds some queueing.
// Throughput is measured in rounds that take every case in turn, after a warm-up of each: on a
// shared 2-core machine one case can land in a slow moment, so medians (and the median of the
// per-round ratios) are reported, with every round printed.
// Every feature is on (FEATURES_ENV): JWT auth and the revocation check, Redis rate limits, metrics,
// request logs at info, usage recording, tracing to an OTLP endpoint at 10 %. BENCH_PORT_OFFSET
// moves every port (default that of stack.mjs).
// Usage: node tools/bench/gateway.mjs [seconds per case and round, default 10] [rounds, default 3] [graphql|usage|usage-control|ladder] [usage: requests per case, default 3000]
// `graphql` runs only REST GET /v1/orders/{id} against GraphQL order(id) (and skips compression).
// `ladder` runs GET /v1/products/{id} through the minimal proxy and through gateways that add the
// optional features one at a time (LADDER), with each one's CPU per request: what each costs.
// `usage` runs the same calls through two gateways in front of the same services, one recording
// each caller's use of the contract (libs/usage) and one with USAGE_RECORDING=off, side by side;
// `usage-control` the same with recording off in both.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import { Agent, createServer, request as httpRequest } from 'node:http';
import autocannon from 'autocannon';
import { benchCaller, cpuMsOf, FEATURES_ENV, listenOn, orderSummaryQuery, port, PORT_OFFSET, startFeatureStack, startMinimalProxy, startStack, table } from './stack.mjs';

const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 3);
const graphqlOnly = process.argv[4] === 'graphql';
// `usage-control`: the same run with recording off in both gateways (an A/A run): the difference
// two gateway processes show with nothing between them, the method's own offset.
const usageControl = process.argv[4] === 'usage-control';
const usageOnly = process.argv[4] === 'usage' || usageControl;
const ladderOnly = process.argv[4] === 'ladder';
/** One-at-a-time requests per case in `usage` mode (the fifth argument, default 3,000). */
const USAGE_REQUESTS = Number(process.argv[5] ?? 3_000);
const WARM_UP_SECONDS = 3;
const FIXED_RATE = 50;
const REQUEST_TIMEOUT_MS = 10_000;
// Issue #30's targets, with every feature on: of the minimal proxy's throughput (median of the
// per-round ratios), p99 added one at a time over it, and GraphQL order(id) against REST.
const KEPT_OF_MINIMAL_TARGET = 90;
const ADDED_P99_TARGET_MS = 1.0;
const GRAPHQL_KEPT_TARGET = 50;
const GRAPHQL_P50_TARGET = 1.8;
const met = (ok) => (ok ? 'met' : 'NOT met');
/**
 * Every feature on, as deployed: request logs at info (read and dropped, as a log shipper would),
 * and tracing exported over OTLP at 10 % (to a sink in this process that accepts and drops).
 */
async function run(name, request, options) {
  const result = await autocannon({ pipelining: 1, duration: seconds, ...options, ...request });
  if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result;
}

/**
 * Times one request to the microsecond (autocannon reports whole ms) over the given agent; rejects
 * on a status of 300 or more.
 */
function timedRequest(request, agent) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    // A request that stalls fails the run, naming itself, instead of waiting for ever.
    const req = httpRequest(request.url, { method: request.method ?? 'GET', headers: request.headers, agent, timeout: REQUEST_TIMEOUT_MS }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode < 300 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`${request.method ?? "GET"} ${request.url}: status ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`${request.method ?? 'GET'} ${request.url}: no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(request.body);
  });
}

function percentiles(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: sorted[Math.floor(sorted.length * 0.5)], p99: sorted[Math.floor(sorted.length * 0.99)] };
}

/** The bytes of one answer as they cross the wire (no decoding). */
function answerBytes(request) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(request.url, { headers: request.headers }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => (bytes += chunk.length));
      res.on('end', () => resolve({ bytes, encoding: res.headers['content-encoding'] ?? 'identity' }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The gateway's CPU time per request over `count` one-at-a-time requests of each case in turn. */
async function cpuPerRequest(pid, requests, count = 1_000) {
  const clients = requests.map((request) => ({ request, agent: new Agent({ keepAlive: true, maxSockets: 1 }), cpuMs: 0 }));
  for (let i = 0; i < count; i++) {
    for (const client of clients) {
      const before = cpuMsOf(pid);
      await timedRequest(client.request, client.agent);
      client.cpuMs += cpuMsOf(pid) - before;
    }
  }
  for (const client of clients) client.agent.destroy();
  return clients.map((client) => client.cpuMs / count);
}

/**
 * One request at a time over a keep-alive connection per case. The cases take turns request by
 * request, so a stall of the host lands on all of them alike instead of on whichever case was
 * running.
 */
async function serialLatencies(requests, count = 2_000) {
  const clients = requests.map((request) => ({ request, agent: new Agent({ keepAlive: true, maxSockets: 1 }), samples: [] }));
  for (let i = 0; i < 50; i++) for (const client of clients) await timedRequest(client.request, client.agent);
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    // Every other round in reverse order: no case always follows the same one (recording on vs
    // off compares neighbours, and a request right after another's may find warmer caches).
    for (const client of i % 2 === 0 ? clients : [...clients].reverse()) client.samples.push(await timedRequest(client.request, client.agent));
    if ((i + 1) % Math.ceil(count / 10) === 0) process.stderr.write(`[bench] ${i + 1} of ${count} rounds of ${clients.length} one-at-a-time requests, ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  }
  for (const client of clients) client.agent.destroy();
  return clients.map(({ samples }) => ({ ...percentiles(samples), samples }));
}

/**
 * A 95 % interval of p99(on) - p99(off) by bootstrap (each side resampled with replacement, 1,000
 * times): how far the run can resolve the difference on this machine at this load.
 */
function p99DifferenceInterval(on, off, resamples = 1_000) {
  const p99Of = (samples) => {
    const drawn = Array.from({ length: samples.length }, () => samples[Math.floor(Math.random() * samples.length)]);
    return percentiles(drawn).p99;
  };
  const differences = Array.from({ length: resamples }, () => p99Of(on) - p99Of(off)).sort((a, b) => a - b);
  return [differences[Math.floor(resamples * 0.025)], differences[Math.floor(resamples * 0.975)]];
}

/**
 * An open-loop load at `rate` requests per second: request i starts at i / rate seconds, whether
 * or not earlier ones have answered, over a pool of keep-alive connections. (autocannon's
 * `overallRate` is not this: each connection sends its share back to back at the start of every
 * second, so 50/s over 10 connections is 10 concurrent requests five times in a row, then idle.)
 */
async function pacedLatencies(request, rate, seconds) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const interval = 1_000 / rate;
  const started = performance.now();
  const pending = [];
  for (let i = 0; i < rate * seconds; i++) {
    const wait = started + i * interval - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // Handled at once: a rejection left waiting while later requests are paced would end the
    // process as unhandled, skipping the `finally` that stops the stack.
    pending.push(timedRequest(request, agent).then((ms) => ({ ms }), (error) => ({ error })));
  }
  const outcomes = await Promise.all(pending);
  agent.destroy();
  const failure = outcomes.find((outcome) => outcome.error);
  if (failure) throw failure.error;
  return percentiles(outcomes.map((outcome) => outcome.ms));
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Saturated req/s of every case, `rounds` times in turn; returns each case's list of rounds. A case
 * may name a process (`[name, request, pid]`): its CPU µs per request over all its rounds, read
 * from /proc around each, are then in `cpuUs` (by case index).
 */
async function throughputRounds(cases) {
  for (const [name, request] of cases) await run(name, request, { connections: 50, duration: WARM_UP_SECONDS });
  const perCase = cases.map(() => []);
  const busy = cases.map(() => ({ cpuMs: 0, requests: 0 }));
  for (let round = 0; round < rounds; round++) {
    for (const [index, [name, request, pid]] of cases.entries()) {
      const before = pid === undefined ? 0 : cpuMsOf(pid);
      const result = await run(name, request, { connections: 50 });
      perCase[index].push(Math.round(result.requests.average));
      if (pid !== undefined) {
        busy[index].cpuMs += cpuMsOf(pid) - before;
        busy[index].requests += result.requests.total;
      }
    }
  }
  perCase.cpuUs = busy.map(({ cpuMs, requests }) => (requests ? (cpuMs * 1000) / requests : undefined));
  return perCase;
}

async function latencies(name, request, throughput, serial) {
  const paced = await pacedLatencies(request, FIXED_RATE, seconds);
  return {
    case: name,
    'max req/s (median)': median(throughput),
    rounds: throughput.join(' / '),
    'p50 ms 1-at-a-time': serial.p50.toFixed(2),
    'p99 ms 1-at-a-time': serial.p99.toFixed(2),
    [`p50 ms @${FIXED_RATE}/s`]: paced.p50.toFixed(2),
    [`p99 ms @${FIXED_RATE}/s`]: paced.p99.toFixed(2),
  };
}

/** A 100-product page as identity, gzip and br: bytes on the wire, gateway CPU and throughput. */
async function compression(gateway, auth, stack) {
  const page = `${gateway}/v1/products?size=100`;
  const codings = [
    ['identity', { url: page, headers: auth }],
    ['gzip', { url: page, headers: { ...auth, 'accept-encoding': 'gzip' } }],
    ['br', { url: page, headers: { ...auth, 'accept-encoding': 'br' } }],
  ];
  const codingThroughput = await throughputRounds(codings);
  const codingCpu = await cpuPerRequest(stack.pids.gateway, codings.map(([, request]) => request));
  const codingRows = [];
  for (const [index, [name, request]] of codings.entries()) {
    const { bytes, encoding } = await answerBytes(request);
    if (encoding !== name) throw new Error(`${name}: the gateway answered ${encoding}`);
    codingRows.push({
      'GET /v1/products?size=100': name,
      'bytes on the wire': bytes,
      'saved': `${(100 - (bytes / (codingRows[0]?.['bytes on the wire'] ?? bytes)) * 100).toFixed(0)} %`,
      'gateway CPU ms/request': codingCpu[index].toFixed(2),
      'max req/s (median)': median(codingThroughput[index]),
      rounds: codingThroughput[index].join(' / '),
    });
  }
  console.log(`\n${table(codingRows)}\n`);
}

/**
 * Recording on against off: a second gateway (USAGE_RECORDING=off) in front of the same services,
 * the cases of both taking turns request by request; the p99 difference is what recording adds.
 */
async function recordingOnAndOff({ gateway, auth, product, order, query }) {
  const offOffset = PORT_OFFSET + 100;
  unrecorded = await startStack({ apps: ['gateway'], databases: {}, offset: offOffset, env: { ...FEATURES_ENV, UPSTREAM_PORT_OFFSET: String(PORT_OFFSET), USAGE_RECORDING: 'off', JWT_SECRET: stack.jwtSecret, SKIP_BUILD: 'true', SKIP_MIGRATIONS: 'true' } });
  const off = `http://127.0.0.1:${8080 + offOffset}`;
  const requestsOf = (base) => [
    ['GET /v1/products/{id}', { url: `${base}/v1/products/${product.id}`, headers: { ...auth, 'x-client-name': 'bench', 'x-client-version': '1.0.0' } }],
    ['GET /v1/orders/{id}?fields=id,status', { url: `${base}/v1/orders/${order.id}?fields=id,status`, headers: auth }],
    ['POST /v1/orders/search (body fields)', { url: `${base}/v1/orders/search`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ status: ['PENDING'] }) }],
    ['GraphQL order(id)', { url: `${base}/v1/graphql`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: query }],
  ];
  const [on, unrecordedCases] = [requestsOf(gateway), requestsOf(off)];
  const requests = on.flatMap(([, request], index) => [request, unrecordedCases[index][1]]);
  const serial = await serialLatencies(requests, USAGE_REQUESTS);
  const rows = on.map(([name], index) => {
    const [withRecording, without] = [serial[index * 2], serial[index * 2 + 1]];
    const [low, high] = p99DifferenceInterval(withRecording.samples, without.samples);
    return {
      case: name,
      'p50 ms off': without.p50.toFixed(3),
      'p50 ms on': withRecording.p50.toFixed(3),
      'p99 ms off': without.p99.toFixed(3),
      'p99 ms on': withRecording.p99.toFixed(3),
      'p99 added ms': (withRecording.p99 - without.p99).toFixed(3),
      'p99 added, 95 % interval': `${low.toFixed(3)} to ${high.toFixed(3)}`,
      'p50 added ms': (withRecording.p50 - without.p50).toFixed(3),
    };
  });
  console.log(`\n${usageControl ? 'A/A control: both gateways with recording off ("on" is the first gateway)' : 'usage recording on vs off'}, ${USAGE_REQUESTS.toLocaleString('en')} requests per case one at a time, the cases taking turns, ${new Date().toISOString()}\n`);
  console.log(table(rows));
}

/**
 * What each feature the gateway promises costs, one step at a time: gateways in front of the same
 * services, from one with every optional feature off to the stack's own with all of them on, and
 * the minimal proxy below them, the same GET /v1/products/{id} through each, taking turns. What
 * no setting turns off is on every step: routing, JWT auth with the revocation lookup, CORS,
 * metrics, the request checks, the error renderer, express and Node's server.
 */
const LADDER = [
  ['every optional feature off: request lines, tracing, Redis, usage recording', { LOG_LEVEL: 'warn', OTEL_SDK_DISABLED: 'true', REDIS_URL: '', USAGE_RECORDING: 'off' }],
  ['+ request lines at info', { OTEL_SDK_DISABLED: 'true', REDIS_URL: '', USAGE_RECORDING: 'off' }],
  ['+ tracing, 10 % sampled, to OTLP', { REDIS_URL: '', USAGE_RECORDING: 'off' }],
  ['+ Redis: shared rate limits, the revocation feed', { USAGE_RECORDING: 'off' }],
];
async function featureLadder({ auth, product }) {
  minimalProxy = await startMinimalProxy(port(9001), port(3003));
  const steps = [];
  for (const [index, [name, env]] of LADDER.entries()) {
    const offset = PORT_OFFSET + 100 * (index + 1);
    const step = await startStack({ apps: ['gateway'], databases: {}, offset, env: { ...FEATURES_ENV, UPSTREAM_PORT_OFFSET: String(PORT_OFFSET), JWT_SECRET: stack.jwtSecret, SKIP_BUILD: 'true', SKIP_MIGRATIONS: 'true', ...env } });
    ladderGateways.push(step);
    steps.push([name, `http://127.0.0.1:${8080 + offset}`, step.pids.gateway]);
  }
  steps.push(['+ usage recording: every feature on (the bench\'s gateway)', `http://127.0.0.1:${port(8080)}`, stack.pids.gateway]);
  const cases = [
    ['minimal Node proxy → catalog (floor of a hop)', { url: `http://127.0.0.1:${port(9001)}/products/${product.id}`, headers: auth }, minimalProxy.pid],
    ...steps.map(([name, base, pid]) => [name, { url: `${base}/v1/products/${product.id}`, headers: auth }, pid]),
  ];
  const throughput = await throughputRounds(cases);
  const kept = (index) => throughput[index].map((value, round) => (value / throughput[0][round]) * 100);
  const rows = cases.map(([name], index) => ({
    'GET /v1/products/{id} through': name,
    'req/s (median)': median(throughput[index]),
    rounds: throughput[index].join(' / '),
    'kept of the minimal proxy, median (rounds)': index === 0 ? '' : `${median(kept(index)).toFixed(0)} % (${kept(index).map((ratio) => ratio.toFixed(0)).join(' / ')})`,
    'CPU µs per request in the proxy or gateway': throughput.cpuUs[index].toFixed(0),
    'added by the step, µs': index < 2 ? '' : (throughput.cpuUs[index] - throughput.cpuUs[index - 1]).toFixed(0),
  }));
  console.log(`\nthe gateway's features, one step at a time, ${seconds} s per case and round, ${rounds} rounds, 50 connections, ${new Date().toISOString()}\n`);
  console.log(table(rows));
  console.log(`\nwith every optional feature off the gateway keeps ${median(kept(1)).toFixed(0)} % of the minimal proxy's throughput; with every feature on, ${median(kept(cases.length - 1)).toFixed(0)} % (target >= ${KEPT_OF_MINIMAL_TARGET} %)`);
}

/** The gateway's overhead against a direct call and a minimal proxy, GraphQL against REST, then compression. */
async function overheadAndCompression({ gateway, auth, stack, cases }) {
  const measured = graphqlOnly ? cases.filter(([name]) => /orders|GraphQL/.test(name)) : cases;
  const throughput = await throughputRounds(measured);
  const serial = await serialLatencies(measured.map(([, request]) => request));
  const rows = [];
  for (const [index, [name, request]] of measured.entries()) rows.push(await latencies(name, request, throughput[index], serial[index]));
  const indexOf = (name) => measured.findIndex(([caseName]) => caseName.startsWith(name));
  const p50 = 'p50 ms 1-at-a-time';
  const p99 = 'p99 ms 1-at-a-time';
  const ratiosOf = (index, base) => throughput[index].map((value, round) => (value / throughput[base][round]) * 100);
  console.log(`\n${seconds} s per case and mode, ${rounds} throughput rounds, ${new Date().toISOString()}\n`);
  console.log(table(rows));
  const [rest, graphql] = [rows[indexOf('via gateway GET /v1/orders')], rows[indexOf('via gateway GraphQL')]];
  const graphqlKept = ratiosOf(indexOf('via gateway GraphQL'), indexOf('via gateway GET /v1/orders'));
  const graphqlP50 = graphql[p50] / rest[p50];
  console.log(
    `\nGraphQL order(id) takes ${graphqlP50.toFixed(2)}x the p50 of REST GET /v1/orders/{id} one at a time (target <= ${GRAPHQL_P50_TARGET}x: ${met(graphqlP50 <= GRAPHQL_P50_TARGET)}), ${(graphql[`p50 ms @${FIXED_RATE}/s`] / rest[`p50 ms @${FIXED_RATE}/s`]).toFixed(2)}x at ${FIXED_RATE}/s, and keeps ${median(graphqlKept).toFixed(0)} % of its throughput, median of rounds ${graphqlKept.map((ratio) => ratio.toFixed(0)).join(' / ')} % (target >= ${GRAPHQL_KEPT_TARGET} %: ${met(median(graphqlKept) >= GRAPHQL_KEPT_TARGET)})`,
  );
  if (!graphqlOnly) {
    const [direct, minimal, proxied] = [rows[indexOf('catalog direct')], rows[indexOf('minimal')], rows[indexOf('via gateway GET /v1/products')]];
    const kept = ratiosOf(indexOf('via gateway GET /v1/products'), indexOf('catalog direct'));
    const minimalKept = ratiosOf(indexOf('minimal'), indexOf('catalog direct'));
    const keptOfMinimal = ratiosOf(indexOf('via gateway GET /v1/products'), indexOf('minimal'));
    const addedOverMinimal = proxied[p99] - minimal[p99];
    console.log(`gateway keeps ${median(keptOfMinimal).toFixed(0)} % of the minimal proxy's throughput, median of rounds ${keptOfMinimal.map((ratio) => ratio.toFixed(0)).join(' / ')} % (target >= ${KEPT_OF_MINIMAL_TARGET} %: ${met(median(keptOfMinimal) >= KEPT_OF_MINIMAL_TARGET)}), and adds ${addedOverMinimal.toFixed(2)} ms at p99 one at a time over it (target <= ${ADDED_P99_TARGET_MS.toFixed(1)} ms: ${met(addedOverMinimal <= ADDED_P99_TARGET_MS)})`);
    console.log(`gateway keeps ${median(kept).toFixed(0)} % of direct throughput, median of rounds ${kept.map((ratio) => ratio.toFixed(0)).join(' / ')} %, and adds ${(proxied[p99] - direct[p99]).toFixed(2)} ms at p99 over it`);
    console.log(`the minimal proxy (floor of a hop on this host) keeps ${median(minimalKept).toFixed(0)} % of direct throughput and adds ${(minimal[p99] - direct[p99]).toFixed(2)} ms at p99`);
    await compression(gateway, auth, stack);
  }
}

// The usage store's keys of this run alone, on the shared Redis.
const starting = startFeatureStack({ env: { USAGE_KEY_PREFIX: `usage:bench:${process.pid}`, ...(usageControl ? { USAGE_RECORDING: 'off' } : {}) } });
let stack;
let bare;
let minimalProxy;
let unrecorded;
/** The ladder's extra gateways (`ladder`). */
const ladderGateways = [];
/**
 * Stops everything this run started: at the end, when a case fails, and on Ctrl-C or kill. A stack,
 * proxy or database left behind holds its ports, and the next run's servers cannot listen.
 */
let stopping;
const stopAll = () =>
  (stopping ??= (async () => {
    bare?.close();
    minimalProxy?.kill();
    await unrecorded?.stop();
    for (const step of ladderGateways) await step.stop();
    // Stopped while the stack was still starting: its own failure path drops the databases, or it is stopped once up.
    await (stack ?? (await starting.catch(() => undefined)))?.stop();
  })());
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void stopAll().finally(() => process.exit(130)));
try {
  stack = await starting;
  const gateway = `http://127.0.0.1:${port(8080)}`;
  const { auth, product, order } = await benchCaller(gateway);
  const query = JSON.stringify({ query: orderSummaryQuery(order.id) });

  if (usageOnly) {
    await recordingOnAndOff({ gateway, auth, product, order, query });
  } else if (ladderOnly) {
    await featureLadder({ auth, product });
  } else {
    const body = JSON.stringify(product);
    bare = await listenOn(
      createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body)),
      port(9000),
    );
    minimalProxy = await startMinimalProxy(port(9001), port(3003));
    const cases = [
      ['bare node http (ceiling)', { url: `http://127.0.0.1:${port(9000)}/` }],
      ['catalog direct GET /products/{id}', { url: `http://127.0.0.1:${port(3003)}/products/${product.id}`, headers: auth }],
      ['minimal Node proxy → catalog (floor of a hop)', { url: `http://127.0.0.1:${port(9001)}/products/${product.id}`, headers: auth }],
      ['via gateway GET /v1/products/{id}', { url: `${gateway}/v1/products/${product.id}`, headers: auth }],
      ['via gateway GET /v1/orders/{id}', { url: `${gateway}/v1/orders/${order.id}`, headers: auth }],
      ['via gateway GraphQL order(id)', { url: `${gateway}/v1/graphql`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: query }],
    ];
    await overheadAndCompression({ gateway, auth, stack, cases });
  }
} finally {
  // Also when a case fails; never process.exit before it (that skips this and leaves everything running).
  await stopAll();
}
