#!/usr/bin/env node
// node tools/measure/files-visited.mjs [--checkout DIR] [--port-offset N] [--runs N] [--calls REGEX]
//
// What one request runs: the source files of this repository with a function executed, in every
// app of a stack, while the stack serves one `POST /v1/orders` and one GraphQL `order(id)`; and
// how many times each app's TokenVerifier.verify ran for it. It builds the apps of --checkout
// (default: this one; another commit's worktree to measure the code as it was), starts them with
// `npm start`'s starter under NODE_V8_COVERAGE, warms them with the same requests, then, per run,
// resets every app's counts (SIGUSR2, coverage-on-signal.cjs), sends one request, and takes the
// counts again. The bundles' source maps name the files. A file counts when one of its functions
// ran in every run and not in most runs of the same length without a request (work on a timer,
// such as the event consumers' long polls); the relay's poll is pushed out of the way
// (EVENTS_POLL_MS=60000). Generated files (git tracks none) and npm packages are not counted.
// --calls lists, per run, the calls of the functions whose `file:name` matches ('access.ts|tokens.ts').
// The figures and how they are read: docs/architecture.md, "Measured: what a request visits".
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({ options: { checkout: { type: 'string' }, 'port-offset': { type: 'string', default: '800' }, runs: { type: 'string', default: '5' }, calls: { type: 'string' } } });
const root = path.resolve(values.checkout ?? path.join(here, '../..'));
const offset = Number(values['port-offset']);
const runs = Number(values.runs);
const gateway = `http://127.0.0.1:${8080 + offset}`;
const appNames = ['gateway', 'users-service', 'orders-service', 'catalog-service', 'inventory-service'];

const coverageDir = mkdtempSync(path.join(tmpdir(), 'files-visited-coverage-'));
const dataDir = mkdtempSync(path.join(tmpdir(), 'files-visited-data-'));
const say = (message) => process.stderr.write(`[files-visited] ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

say(`building the apps of ${root}`);
for (const app of appNames) execFileSync(process.execPath, ['tools/build/build-app.mjs', app], { cwd: root, stdio: 'ignore' });

const stack = spawn(process.execPath, ['tools/start/start.js'], {
  cwd: root,
  stdio: 'ignore',
  detached: true,
  env: {
    ...process.env,
    PORT_OFFSET: String(offset),
    SKIP_BUILD: 'true',
    DATA_DIR: dataDir,
    EVENTS_POLL_MS: '60000',
    NODE_V8_COVERAGE: coverageDir,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${path.join(here, 'coverage-on-signal.cjs')}`,
  },
});
const stop = () => {
  try {
    process.kill(-stack.pid, 'SIGTERM');
  } catch {
    // already gone
  }
};
process.on('exit', stop);

async function call(method, url, { token, body, headers } = {}) {
  const res = await fetch(`${gateway}${url}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const readiness = [`${gateway}/readyz`, ...[3001, 3002, 3003, 3004].map((port) => `http://127.0.0.1:${port + offset}/readyz`)];
for (let waited = 0; ; waited += 500) {
  const ready = await Promise.all(readiness.map((url) => fetch(url).then((res) => res.ok, () => false)));
  if (ready.every(Boolean)) break;
  if (waited > 180_000) throw new Error('the stack did not become ready in 3 minutes');
  await sleep(500);
}
await sleep(2000); // the consumers' first long polls
say('stack ready');

const apps = () => Object.fromEntries(readdirSync(coverageDir).filter((file) => file.startsWith('app-')).map((file) => [Number(file.slice(4, -5)), readFileSync(path.join(coverageDir, file), 'utf8')]));
const pids = apps();
if (Object.keys(pids).length !== appNames.length) throw new Error(`expected ${appNames.length} apps, found ${JSON.stringify(pids)}`);

/** Every app writes the functions run since its last signal; answers the file each wrote, by app. */
async function takeCoverage() {
  const before = new Set(readdirSync(coverageDir));
  for (const pid of Object.keys(pids)) process.kill(Number(pid), 'SIGUSR2');
  for (let waited = 0; ; waited += 20) {
    const markers = readdirSync(coverageDir).filter((file) => file.startsWith('taken-') && !before.has(file));
    if (markers.length === appNames.length) break;
    if (waited > 20_000) throw new Error('an app did not write its coverage');
    await sleep(20);
  }
  const taken = {};
  for (const file of readdirSync(coverageDir)) {
    const pid = /^coverage-(\d+)-/.exec(file)?.[1];
    if (pid && pids[pid] && !before.has(file)) taken[pids[pid]] = path.join(coverageDir, file);
  }
  return taken;
}

const maps = new Map();
/** The source files with a function run, and the calls of each named function there, in one app's coverage. */
function ranIn(file) {
  const coverage = JSON.parse(readFileSync(file, 'utf8'));
  const files = new Set();
  const functions = new Set();
  const calls = {};
  for (const script of coverage.result) {
    if (!/\/dist\/apps\/[^/]+\/main\.js$/.test(script.url)) continue;
    const cached = coverage['source-map-cache']?.[script.url];
    if (!cached) throw new Error(`no source map for ${script.url}`);
    if (!maps.has(script.url)) {
      const starts = [0];
      for (const length of cached.lineLengths) starts.push(starts.at(-1) + length + 1);
      maps.set(script.url, { map: new SourceMap(cached.data), starts, base: path.dirname(fileURLToPath(script.url)) });
    }
    const { map, starts, base } = maps.get(script.url);
    for (const fn of script.functions) {
      const count = fn.ranges[0].count;
      if (count === 0 || fn.ranges[0].startOffset === 0) continue; // not run, or the bundle's top level
      const offsetAt = fn.ranges[0].startOffset;
      let line = starts.findIndex((start) => start > offsetAt) - 1;
      if (line < 0) line = starts.length - 1;
      const entry = map.findEntry(line, offsetAt - starts[line]);
      if (!entry?.originalSource) continue;
      const source = path.relative(root, path.resolve(base, entry.originalSource.replace(/^file:\/\//, '')));
      if (source.startsWith('..') || source.includes('node_modules') || source.includes('/generated/')) continue; // git tracks neither
      files.add(source);
      functions.add(`${source}\t${fn.functionName}\t${offsetAt}`);
      const name = `${source}:${fn.functionName || '(anonymous)'}`;
      calls[name] = (calls[name] ?? 0) + count;
    }
  }
  return { files, functions, calls };
}

// A customer, a product, and warm apps (caches filled, code compiled).
const email = `visits-${Date.now()}@example.com`;
const password = 'visits-password-1';
const signUp = await call('POST', '/v1/users', { body: { name: 'Visits', email, password } });
if (signUp.status !== 201) throw new Error(`sign-up answered ${signUp.status}: ${JSON.stringify(signUp.body)}`);
const { accessToken: token } = (await call('POST', '/v1/tokens', { body: { email, password } })).body;
const product = (await call('GET', '/v1/products?size=1', { token })).body.items[0];
let sequence = 0;
const placeOrder = () => call('POST', '/v1/orders', { token, body: { items: [{ productId: product.id, quantity: 1 }] }, headers: { 'idempotency-key': `visits-${Date.now()}-${(sequence += 1)}` } });
const orderSummary = `query OrderSummary($id: ID!) { order(id: $id) { id amount user { name } product { name imageUrl rating } shipment { status } reviewCount } }`;
const readOrder = (id) => call('POST', '/v1/graphql', { token, body: { query: orderSummary, variables: { id } } });
const warm = await placeOrder();
if (warm.status !== 201) throw new Error(`POST /v1/orders answered ${warm.status}: ${JSON.stringify(warm.body)}`);
for (let i = 0; i < 5; i += 1) {
  await placeOrder();
  const read = await readOrder(warm.body.id);
  if (read.status !== 200 || read.body.errors) throw new Error(`order(id) answered ${read.status}: ${JSON.stringify(read.body)}`);
}

/** Per app: the files that ran in every run, and TokenVerifier.verify's calls (and its signature checks) in each. */
async function runsOf(work) {
  const perRun = [];
  for (let run = 0; run < runs; run += 1) {
    await takeCoverage();
    const started = performance.now();
    await work();
    const elapsed = performance.now() - started;
    const taken = await takeCoverage();
    perRun.push({ elapsed, apps: Object.fromEntries(Object.entries(taken).map(([app, file]) => [app, ranIn(file)])) });
  }
  const callsOf = (app, pattern) => perRun.map((r) => Object.entries(r.apps[app].calls).filter(([name]) => pattern.test(name)).reduce((sum, [, count]) => sum + count, 0));
  return {
    elapsed: perRun.map((r) => r.elapsed),
    byApp: Object.fromEntries(
      appNames.map((app) => [
        app,
        {
          // the functions that ran in every run, and those that ran in most (for the baseline)
          everyRun: [...perRun[0].apps[app].functions].filter((fn) => perRun.every((r) => r.apps[app].functions.has(fn))),
          mostRuns: [...new Set(perRun.flatMap((r) => [...r.apps[app].functions]))].filter((fn) => perRun.filter((r) => r.apps[app].functions.has(fn)).length * 2 > perRun.length),
          verify: callsOf(app, /libs\/auth\/src\/tokens\.ts:verify$/),
          signatureChecks: callsOf(app, /libs\/auth\/src\/tokens\.ts:verifiedPayload$/),
          ...(values.calls ? { calls: perRun.map((r) => Object.fromEntries(Object.entries(r.apps[app].calls).filter(([name]) => new RegExp(values.calls).test(name)))) } : {}),
        },
      ]),
    ),
  };
}

/**
 * One request's files: those with a function that ran in every run of it and not in most runs of
 * the same length with no request (the warm baseline: timers, long polls), so a file the request
 * shares with that background work (the outbox's, recording the order's event) still counts.
 */
async function measure(label, request) {
  const requested = await runsOf(request);
  const longest = Math.max(...requested.elapsed);
  const idle = await runsOf(() => sleep(longest));
  const fileOf = (fn) => fn.split('\t')[0];
  const all = new Set();
  const withBackground = new Set();
  const byApp = {};
  for (const app of appNames) {
    requested.byApp[app].everyRun.forEach((fn) => withBackground.add(fileOf(fn)));
    const baseline = new Set(idle.byApp[app].mostRuns);
    const files = [...new Set(requested.byApp[app].everyRun.filter((fn) => !baseline.has(fn)).map(fileOf))].sort();
    files.forEach((file) => all.add(file));
    byApp[app] = {
      files,
      baseline: [...new Set([...baseline].map(fileOf))].sort(),
      verify: requested.byApp[app].verify,
      verifyIdle: idle.byApp[app].verify,
      signatureChecks: requested.byApp[app].signatureChecks,
      ...(values.calls ? { calls: requested.byApp[app].calls, callsIdle: idle.byApp[app].calls } : {}),
    };
  }
  // filesWithBackground: the files that ran in every run, the baseline left in (an upper bound).
  return { request: label, runs, milliseconds: requested.elapsed.map(Math.round), files: all.size, filesWithBackground: withBackground.size, list: [...all].sort(), byApp };
}

const results = [
  await measure('POST /v1/orders', placeOrder),
  await measure('GraphQL order(id)', () => readOrder(warm.body.id)),
];
const stopped = new Promise((resolve) => stack.once('exit', resolve));
stop();
process.stdout.write(`${JSON.stringify({ checkout: root, commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim(), results }, null, 2)}\n`);
await Promise.race([stopped, sleep(30_000)]); // the apps write their last coverage as they exit
rmSync(coverageDir, { recursive: true, force: true, maxRetries: 5 });
rmSync(dataDir, { recursive: true, force: true, maxRetries: 5 });
process.exit(0);
