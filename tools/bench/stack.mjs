// Starts the built apps for a benchmark with tools/start/start.js (the `npm start` script), on
// fresh PostgreSQL databases and the local Redis, on their own ports. Loopback only.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import pg from 'pg';

// Benchmarks run from the repository root (npm run bench:*); some are bundled TypeScript, where
// import.meta is not available.
export const root = process.cwd();
if (!existsSync(path.join(root, 'tools/start/start.js'))) throw new Error('Run benchmarks from the repository root.');
/** Where a bench's stack listens: BENCH_PORT_OFFSET moves it (several people benchmarking on one host). */
export const PORT_OFFSET = Number(process.env.BENCH_PORT_OFFSET ?? 5_000);
export const port = (base) => base + PORT_OFFSET;
export const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
export const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function createDatabases(services, { name: kept } = {}) {
  if (kept !== undefined && !/^[a-z0-9_]{1,40}$/.test(kept)) throw new Error(`database name ${kept}: use a-z, 0-9 and _ (at most 40)`);
  const suffix = randomBytes(4).toString('hex');
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  /** @type {Record<string, string>} service → its database URL */
  const urls = {};
  let reused = kept !== undefined;
  for (const service of services) {
    const name = kept !== undefined ? `bench_${kept}_${service}` : `bench_${service}_${suffix}`;
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      reused = false;
      await admin.query(`CREATE DATABASE "${name}"`);
    }
    const url = new URL(postgresUrl);
    url.pathname = `/${name}`;
    urls[service] = url.toString();
  }
  await admin.end();
  return {
    urls,
    /** Every database was there already (kept from an earlier run under the same name). */
    reused,
    drop: async () => {
      const cleanup = new pg.Client({ connectionString: postgresUrl });
      await cleanup.connect();
      for (const url of Object.values(urls)) await cleanup.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
      await cleanup.end();
    },
  };
}

/**
 * Every feature on, as the gateway bench measures it: request logs at info, and tracing at 10 % to
 * the OTLP sink startFeatureStack opens (JWT auth, the revocation check, Redis rate limits,
 * metrics and usage recording are on by default).
 */
export const FEATURES_ENV = { LOG_LEVEL: 'info', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port(4318)}`, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' };

/** Listens on `listenPort` (loopback) or fails: an 'error' event unheard would end a run without stopping its stacks. */
export function listenOn(server, listenPort) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, '127.0.0.1', () => resolve(server));
  });
}

/**
 * The stack with every feature on (FEATURES_ENV, plus `env`) on fresh databases, with an OTLP
 * sink that takes the spans and drops them. `apps` and `nodeFlags` as startStack's. `stop()`
 * stops the apps, closes the sink and drops the databases.
 */
export async function startFeatureStack({ apps, env = {}, nodeFlags = [] } = {}) {
  const databases = await createDatabases(['users', 'orders', 'catalog', 'inventory']);
  const otlp = createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()));
  let stack;
  let stopped;
  const stop = () =>
    (stopped ??= (async () => {
      otlp.close();
      await stack?.stop();
      await databases.drop();
    })());
  try {
    await listenOn(otlp, port(4318));
    stack = await startStack({ apps, databases: databases.urls, env: { ...FEATURES_ENV, ...env }, nodeFlags });
    return { ...stack, databases, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** GraphQL `order(id)` as every bench asks it: the order, its user, product, shipment and review count, from three subgraphs. */
export const orderSummaryQuery = (orderId) => `{ order(id: "${orderId}") { id amount user { name } product { name imageUrl rating } shipment { status } reviewCount } }`;

/**
 * What a bench calls with, from the gateway at `base` (waited for until ready): the seeded
 * admin's token, a product, and an order of theirs placed now.
 */
export async function benchCaller(base) {
  for (let tries = 0; !(await fetch(`${base}/readyz`).then((res) => res.ok, () => false)); tries++) {
    if (tries > 100) throw new Error(`the gateway at ${base} did not become ready`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const json = async (url, init = {}) => (await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...init.headers } })).json();
  const { accessToken } = await json(`${base}/v1/tokens`, { method: 'POST', body: JSON.stringify({ email: 'admin@example.com', password: 'admin-password' }) });
  const auth = { authorization: `Bearer ${accessToken}` };
  const product = (await json(`${base}/v1/products?size=1`, { headers: auth })).items[0];
  const order = await json(`${base}/v1/orders`, { method: 'POST', headers: auth, body: JSON.stringify({ items: [{ productId: product.id, quantity: 1 }] }) });
  return { auth, product, order };
}

/**
 * Starts `apps` (all five by default) on `offset`; resolves once every one is ready. `nodeFlags`
 * go to every app's node after node-flags.json's (start.js's START_NODE_FLAGS): a profiling run's
 * `--cpu-prof`.
 */
export async function startStack({ apps, databases, env = {}, offset = PORT_OFFSET, nodeFlags = [] }) {
  const childEnv = {
    ...process.env,
    // As deployed: the image and the Kubernetes config maps set it. Libraries read it too:
    // graphql-js, in development, checks every instanceof test for a second copy of itself.
    NODE_ENV: 'production',
    // The demo catalog, as every bench so far measured with (production leaves it out by default).
    DEMO_DATA: 'true',
    PORT_OFFSET: String(offset),
    LOG_LEVEL: 'warn',
    JWT_SECRET: randomBytes(32).toString('hex'),
    REDIS_URL: redisUrl,
    RATE_LIMIT_POINTS: '100000000',
    RATE_LIMIT_TOKENS_IP_POINTS: '100000',
    ...env,
  };
  for (const [service, url] of Object.entries(databases)) childEnv[`DATABASE_URL_${service.toUpperCase()}`] = url;
  if (apps) childEnv.START_APPS = apps.join(',');
  if (nodeFlags.length) childEnv.START_NODE_FLAGS = JSON.stringify(nodeFlags);
  const starter = spawn(process.execPath, [path.join(root, 'tools/start/start.js')], { cwd: root, env: childEnv, stdio: ['ignore', 'pipe', 'inherit'] });
  /** Each app's process id, as start.js announces it. */
  const pids = {};
  await new Promise((resolve, reject) => {
    readline.createInterface({ input: starter.stdout }).on('line', (line) => {
      // Only start.js's own lines: the apps' logs pass through the same stream, and a warning
      // such as "reading an event log failed; trying again" while the others start is no failure.
      // eslint-disable-next-line no-control-regex
      const own = /^\[start\] (.*)$/.exec(line.replace(/\x1b\[[0-9;]*m/g, ''))?.[1];
      if (own === undefined) return;
      const started = /(\S+) pid (\d+)/.exec(own);
      if (started) pids[started[1]] = Number(started[2]);
      if (/apps ready/.test(own)) resolve();
      if (/not ready|failed/.test(own)) reject(new Error(own));
    });
    starter.once('exit', (code) => reject(new Error(`start.js exited ${code}`)));
  });
  return {
    jwtSecret: childEnv.JWT_SECRET,
    pids,
    stop: () =>
      new Promise((resolve) => {
        // Already gone (it stops with its apps when one fails): an 'exit' to wait for never comes.
        if (starter.exitCode !== null || starter.signalCode !== null) return resolve();
        starter.once('exit', resolve);
        starter.kill('SIGINT');
      }),
  };
}

/** CPU time (user + system) a process has used so far, in ms, from /proc (Linux). */
export function cpuMsOf(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}
/** USER_HZ: fixed at 100 in Linux's user-space ABI, whatever the kernel's own tick rate. */
const CLOCK_TICKS_PER_S = 100;

export function table(rows) {
  const widths = Object.keys(rows[0]).map((key) => Math.max(key.length, ...rows.map((row) => String(row[key]).length)));
  const line = (cells) => `| ${cells.map((cell, i) => String(cell).padEnd(widths[i])).join(' | ')} |`;
  return [line(Object.keys(rows[0])), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map((row) => line(Object.values(row)))].join('\n');
}

/**
 * The floor of any hop on this host: a minimal Node `http` proxy (keep-alive agent, request
 * piped in, answer piped out, no checks) in its own process, in front of the same catalog.
 * `nodeFlags` go to its node (gateway-profile.mjs runs it under --cpu-prof); it exits on SIGTERM.
 */
export function startMinimalProxy(listenPort, target, nodeFlags = []) {
  const source = `
    const http = require('node:http');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
    http.createServer((req, res) => {
      const upstream = http.request({ host: '127.0.0.1', port: ${target}, path: req.url, method: req.method, headers: req.headers, agent }, (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.writeHead(502).end());
      req.pipe(upstream);
    }).listen(${listenPort}, '127.0.0.1', () => console.log('listening'));
    process.on('SIGTERM', () => process.exit(0));`;
  const child = spawn(process.execPath, [...nodeFlags, '-e', source], { stdio: ['ignore', 'pipe', 'inherit'] });
  // A child that dies before listening (its port taken, say by one an interrupted run left) fails
  // the run: waiting for its 'listening' alone would wait for ever.
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the minimal proxy exited (${code}) before listening on ${listenPort}`)));
  });
}
