#!/usr/bin/env node
// `npm start`: builds the five apps, starts them on the embedded defaults (PGlite, in-memory
// rate limits), waits until each is ready, prints where to go, and stops them all on Ctrl-C.
// Set DATABASE_URL_<APP> (e.g. DATABASE_URL_USERS) or REDIS_URL to use real servers instead.
'use strict';
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
process.env.NX_NO_CLOUD = 'true';

const { spawn, spawnSync } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');

const root = path.resolve(__dirname, '../..');
const apps = [
  { name: 'inventory-service', ready: 'http://127.0.0.1:3004/readyz', db: 'INVENTORY', color: 35 },
  { name: 'catalog-service', ready: 'http://127.0.0.1:3003/readyz', db: 'CATALOG', color: 33 },
  { name: 'users-service', ready: 'http://127.0.0.1:3001/readyz', db: 'USERS', color: 32 },
  { name: 'orders-service', ready: 'http://127.0.0.1:3002/readyz', db: 'ORDERS', color: 34 },
  { name: 'gateway', ready: 'http://127.0.0.1:8080/readyz', color: 36 },
];
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

const children = [];
for (const app of selected) {
  const env = { ...process.env };
  if (app.db && process.env[`DATABASE_URL_${app.db}`]) env.DATABASE_URL = process.env[`DATABASE_URL_${app.db}`];
  else delete env.DATABASE_URL;
  const child = spawn(process.execPath, [path.join(root, 'dist/apps', app.name, 'main.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }); // own process group: only we signal it
  const prefix = `\x1b[${app.color}m${app.name.padEnd(width)}\x1b[0m |`;
  for (const stream of [child.stdout, child.stderr]) {
    readline.createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix} ${line}\n`));
  }
  child.on('exit', (code, signal) => {
    app.exited = true;
    if (!stopping) {
      say(`${app.name} exited (${signal ?? code}); stopping the rest`);
      stop(1);
    }
  });
  children.push({ app, child });
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
function stop(code) {
  if (stopping) return;
  stopping = true;
  say('stopping…');
  for (const { child } of children) if (child.exitCode === null) child.kill('SIGTERM');
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

(async () => {
  const results = await Promise.all(selected.map((app) => waitReady(app, 60_000)));
  if (results.some((ready) => !ready)) {
    say(`not ready: ${selected.filter((_, i) => !results[i]).map((app) => app.name).join(', ')}`);
    return stop(1);
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  say(`all ${selected.length} apps ready in ${seconds} s`);
  say('gateway:  http://localhost:8080  (REST under /v1, GraphQL at /v1/graphql)');
  say(`admin:    ${process.env.ADMIN_EMAIL ?? 'admin@example.com'} / ${process.env.ADMIN_PASSWORD ?? 'admin-password'}  (development defaults)`);
  say(`data:     ${process.env.DATA_DIR ?? path.join(root, '.data')}`);
  say('Ctrl-C stops everything.');
})();
