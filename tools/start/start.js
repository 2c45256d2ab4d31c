#!/usr/bin/env node
// `npm start`: builds the five apps, starts them on the embedded defaults (PGlite, in-memory
// rate limits), waits until each is ready, prints where to go, and stops them all on Ctrl-C.
// Set DATABASE_URL_<APP> (e.g. DATABASE_URL_USERS) or REDIS_URL to use real servers instead
// (those databases are migrated first, as each pod's `migrate` init container does in Kubernetes). PORT_OFFSET=N moves every
// port by N so a second stack (the e2e suite's) can run beside a development one;
// UPSTREAM_PORT_OFFSET=M makes the apps call each other where a stack at offset M listens.
'use strict';
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
process.env.NX_NO_CLOUD = 'true';

const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const { migrate } = require('../db/migrate');

const root = path.resolve(__dirname, '../..');
// V8 flags every app runs with, here and in the image's CMD (deploy/docker/Dockerfile; a deploy
// test keeps the two equal). A 32 MiB young generation: with dozens of requests in flight, the
// default one fills before they finish, so their short-lived objects get copied and promoted;
// the gateway spends 10–25 % less CPU per request with it (docs/benchmarks.md).
// START_NODE_FLAGS (a JSON array of strings) adds flags for this run only: a profiling bench's --cpu-prof.
const nodeFlags = [...require('./node-flags.json'), ...extraNodeFlags(process.env.START_NODE_FLAGS)];
function extraNodeFlags(text) {
  if (!text) return [];
  let flags;
  try {
    flags = JSON.parse(text);
  } catch {
    flags = undefined;
  }
  if (!Array.isArray(flags) || !flags.every((flag) => typeof flag === 'string')) {
    process.stderr.write(`[start] START_NODE_FLAGS=${text}: must be a JSON array of strings, e.g. ["--cpu-prof"]\n`);
    process.exit(1);
  }
  return flags;
}
const offset = Number(process.env.PORT_OFFSET ?? 0);
const port = (base) => base + offset;
// The gRPC port sits far above the others: an offset that keeps the HTTP ports valid can push it
// past 65535, so it then moves next to them (3005 + offset). GRPC_PORT alone moves it anywhere.
const grpcPort = process.env.GRPC_PORT ? Number(process.env.GRPC_PORT) : port(50051) <= 65535 ? port(50051) : port(3005);
const highest = Math.max(port(9464), grpcPort);
if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(grpcPort) || grpcPort < 1 || highest > 65535) {
  process.stderr.write(`[start] PORT_OFFSET=${process.env.PORT_OFFSET ?? ''} GRPC_PORT=${process.env.GRPC_PORT ?? ''}: every port must be a whole number from 1 to 65535 (PORT_OFFSET at most ${65535 - 9464})\n`);
  process.exit(1);
}
// Where the apps call each other: each other's ports, or, with UPSTREAM_PORT_OFFSET (the cluster,
// tools/start/cluster.ts), the load balancer that stands in front of every replica and listens
// where a stack at that offset would.
const upstreamOffset = process.env.UPSTREAM_PORT_OFFSET ? Number(process.env.UPSTREAM_PORT_OFFSET) : offset;
const upstream = (base) => base + upstreamOffset;
const upstreamGrpcPort = upstreamOffset === offset ? grpcPort : upstream(50051) <= 65535 ? upstream(50051) : upstream(3005);
if (!Number.isInteger(upstreamOffset) || upstreamOffset < 0 || upstream(9464) > 65535) {
  process.stderr.write(`[start] UPSTREAM_PORT_OFFSET=${process.env.UPSTREAM_PORT_OFFSET}: must be a whole number from 0 to ${65535 - 9464}\n`);
  process.exit(1);
}
const urls = { users: `http://127.0.0.1:${upstream(3001)}`, orders: `http://127.0.0.1:${upstream(3002)}`, catalog: `http://127.0.0.1:${upstream(3003)}`, inventory: `http://127.0.0.1:${upstream(3004)}` };
const apps = [
  { name: 'inventory-service', port: port(3004), db: 'INVENTORY', color: 35, env: { GRPC_PORT: grpcPort } },
  { name: 'catalog-service', port: port(3003), db: 'CATALOG', color: 33, env: { USERS_URL: urls.users } }, // USERS_URL: the events it consumes
  { name: 'users-service', port: port(3001), db: 'USERS', color: 32, env: { ORDERS_URL: urls.orders, CATALOG_URL: urls.catalog, INVENTORY_URL: urls.inventory } }, // the events webhooks carry
  { name: 'orders-service', port: port(3002), db: 'ORDERS', color: 34, env: { CATALOG_URL: urls.catalog, USERS_URL: urls.users, INVENTORY_ADDRESS: `127.0.0.1:${upstreamGrpcPort}` } },
  { name: 'gateway', port: port(8080), color: 36, env: { METRICS_PORT: port(9464), USERS_URL: urls.users, ORDERS_URL: urls.orders, CATALOG_URL: urls.catalog, INVENTORY_URL: urls.inventory } },
].map((app) => ({ ...app, ready: `http://127.0.0.1:${app.port}/readyz` }));
// An app that exits is reported at once; one still starting is waited for this long. On a busy
// 2-core machine an embedded database's first migrations alone have taken 50 s.
const readyTimeoutMs = Number(process.env.START_READY_TIMEOUT_MS || 180_000);
if (!Number.isInteger(readyTimeoutMs) || readyTimeoutMs < 1_000) {
  process.stderr.write(`[start] START_READY_TIMEOUT_MS=${process.env.START_READY_TIMEOUT_MS}: must be a whole number of milliseconds, at least 1000\n`);
  process.exit(1);
}
const only = process.env.START_APPS ? process.env.START_APPS.split(',') : null;
const selected = apps.filter((app) => !only || only.includes(app.name));
const width = Math.max(...selected.map((app) => app.name.length));
const started = Date.now();

function say(message) {
  process.stdout.write(`\x1b[1m[start]\x1b[0m ${message}\n`);
}

if (process.env.SKIP_BUILD !== 'true') {
  say('building apps (nx, cached)…');
  const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', `--projects=${selected.map((app) => app.name).join(',')}`, '--outputStyle=static'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NX_DAEMON: 'false' },
  });
  if (build.status !== 0) {
    process.stdout.write(build.stdout);
    process.stderr.write(build.stderr);
    say('build failed');
    process.exit(1);
  }
  say(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/** Where each app keeps its data, as the banner says it: the embedded folder, or the external server's host and database (never a password). */
function dataLines() {
  const dataDir = path.resolve(root, process.env.DATA_DIR ?? '.data');
  const lines = selected
    .filter((app) => app.db)
    .map((app) => {
      const url = process.env[`DATABASE_URL_${app.db}`];
      return `${app.name.padEnd(width)}  ${url ? `PostgreSQL ${serverOf(url)} (DATABASE_URL_${app.db})` : `embedded PGlite in ${path.join(dataDir, app.name)}`}`;
    });
  if (selected.some((app) => app.name === 'gateway')) lines.push(`${'rate limits'.padEnd(width)}  ${process.env.REDIS_URL ? `Redis ${serverOf(process.env.REDIS_URL)} (REDIS_URL)` : 'in memory (REDIS_URL unset)'}`);
  return lines.map((line, i) => `${i === 0 ? 'data:    ' : '         '} ${line}`);
}

/** `host:port/database` of a connection URL, without user or password. */
function serverOf(url) {
  try {
    const parsed = new URL(url);
    return `${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`;
  } catch {
    return '(an unparsable URL)';
  }
}

function envOf(app) {
  const env = { ...process.env, PORT: String(app.port), ...Object.fromEntries(Object.entries(app.env ?? {}).map(([k, v]) => [k, String(v)])) };
  // The services answer on loopback only (unless LISTEN_HOST says otherwise): on a bare machine
  // the gateway is the one way in, as the cluster's NetworkPolicies make it there. A service
  // reached directly would apply none of the gateway's limits or revocation checks.
  if (app.name !== 'gateway' && !process.env.LISTEN_HOST) env.LISTEN_HOST = '127.0.0.1';
  if (app.db && process.env[`DATABASE_URL_${app.db}`]) env.DATABASE_URL = process.env[`DATABASE_URL_${app.db}`];
  else delete env.DATABASE_URL;
  return env;
}

// SKIP_MIGRATIONS=true: the databases are migrated already (a replica of the cluster started
// again during a rollout; in Kubernetes its `migrate` init container would find nothing to apply).
const failedMigration = process.env.SKIP_MIGRATIONS === 'true' ? null : migrate(selected.map((app) => app.name));
if (failedMigration) {
  process.stdout.write(failedMigration.output);
  say(`migrating ${failedMigration.app} failed`);
  process.exit(1);
}

const children = [];
for (const app of selected) {
  const env = envOf(app);
  const child = spawn(process.execPath, [...nodeFlags, path.join(root, 'dist/apps', app.name, 'main.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }); // own process group: only we signal it
  const prefix = `\x1b[${app.color}m${app.name.padEnd(width)}\x1b[0m |`;
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix} ${line}\n`));
  }
  child.on('exit', (code, signal) => {
    app.exited = true;
    if (stopping) return;
    // Before everything is ready a crash is a failed start; after, the rest keep serving
    // (the gateway answers 502/503 for the missing app) until Ctrl-C.
    if (!allReady) {
      say(`${app.name} exited (${signal ?? code}) while starting; stopping the rest`);
      stop(1);
    } else {
      say(`${app.name} exited (${signal ?? code}); the others keep running`);
    }
  });
  children.push({ app, child });
  say(`${app.name} pid ${child.pid}`);
}

async function waitReady(app, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !app.exited) {
    try {
      const res = await fetch(app.ready);
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

let stopping = false;
let allReady = false;
function stop(code) {
  if (stopping) return;
  stopping = true;
  // Signal first: the apps run in their own process groups and would outlive us otherwise.
  for (const { child } of children) if (child.exitCode === null) child.kill('SIGTERM');
  say('stopping…');
  const force = setTimeout(() => {
    for (const { child } of children) if (child.exitCode === null) child.kill('SIGKILL');
  }, 15_000);
  Promise.all(children.map(({ child }) => (child.exitCode !== null ? null : new Promise((resolve) => child.once('exit', resolve))))).then(() => {
    clearTimeout(force);
    say('all stopped');
    process.exit(code);
  });
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
process.on('SIGHUP', () => stop(0));
// Whoever read our output is gone (a closed terminal, a test runner that gave up): stop the
// apps rather than crash on the broken pipe and leave them running.
process.stdout.on('error', () => stop(1));

(async () => {
  const results = await Promise.all(selected.map((app) => waitReady(app, readyTimeoutMs)));
  if (results.some((ready) => !ready)) {
    say(`not ready within ${readyTimeoutMs / 1000} s (START_READY_TIMEOUT_MS): ${selected.filter((_, i) => !results[i]).map((app) => app.name).join(', ')}`);
    return stop(1);
  }
  allReady = true;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  say(`all ${selected.length} apps ready in ${seconds} s`);
  const serves = (name) => selected.some((app) => app.name === name);
  if (serves('gateway')) {
    say(`gateway:  http://localhost:${port(8080)}  (REST under /v1, GraphQL at /v1/graphql; inventory gRPC on ${grpcPort})`);
  } else {
    // Some apps alone (START_APPS, `nx serve <app>`): each is reached directly.
    for (const app of selected) say(`${app.name}: http://localhost:${app.port}${app.name === 'inventory-service' ? `  (gRPC on ${grpcPort})` : ''}`);
  }
  // The development default is public (README); a password someone chose is never printed.
  if (serves('users-service')) say(`admin:    ${process.env.ADMIN_EMAIL ?? 'admin@example.com'} / ${process.env.ADMIN_PASSWORD ? '(ADMIN_PASSWORD)' : 'admin-password  (development default)'}`);
  if (serves('gateway')) say(`docs:     http://localhost:${port(8080)}/docs  (API reference), http://localhost:${port(8080)}/v1/graphql in a browser (GraphiQL)`);
  for (const line of dataLines()) say(line);
  say('Ctrl-C stops everything.');
})();
