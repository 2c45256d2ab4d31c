#!/usr/bin/env node
// The embedded stack as `npm start` runs it (PGlite, in-memory limits): time to ready and idle
// resident memory of the five apps, on a fresh DATA_DIR (initdb, migrations, demo data) and
// again on the same one, as a developer's second start finds it. Loopback only; stops itself.
// Targets: ready in 12 s or less after the first build, 1 GiB resident or less for all five.
// Usage: node tools/bench/embedded-stack.mjs [idle seconds before reading memory, default 5]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { root, table } from './stack.mjs';

const idleSeconds = Number(process.argv[2] ?? 5);
const OFFSET = 6_500;

/** Resident memory of a process, MiB, from /proc (Linux). */
const residentMiB = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function startOnce(dataDir) {
  const starter = spawn(process.execPath, [path.join(root, 'tools/start/start.js')], {
    cwd: root,
    env: { ...process.env, PORT_OFFSET: String(OFFSET), DATA_DIR: dataDir, LOG_LEVEL: 'warn', DATABASE_URL: '', REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const apps = {};
  const seconds = await new Promise((resolve, reject) => {
    readline.createInterface({ input: starter.stdout }).on('line', (line) => {
      const started = /(\S+) pid (\d+)/.exec(line);
      if (started) apps[started[1]] = Number(started[2]);
      const ready = /all \d+ apps ready in ([\d.]+) s/.exec(line);
      if (ready) resolve(Number(ready[1]));
      if (/not ready|failed/.test(line)) reject(new Error(line));
    });
    starter.once('exit', (code) => reject(new Error(`start.js exited ${code}`)));
  });
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1_000));
  const memory = Object.fromEntries(Object.entries(apps).map(([app, pid]) => [app, residentMiB(pid)]));
  await new Promise((resolve) => {
    starter.once('exit', resolve);
    starter.kill('SIGINT');
  });
  return { seconds, memory };
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'embedded-stack-'));
try {
  const runs = [['fresh DATA_DIR', await startOnce(dataDir)], ['second start, same DATA_DIR', await startOnce(dataDir)]];
  const apps = Object.keys(runs[0][1].memory);
  const rows = runs.map(([name, run]) => ({
    start: name,
    'ready s': run.seconds.toFixed(1),
    ...Object.fromEntries(apps.map((app) => [`${app} MiB`, run.memory[app].toFixed(0)])),
    'all five MiB': Object.values(run.memory).reduce((sum, value) => sum + value, 0).toFixed(0),
  }));
  console.log(`\nidle ${idleSeconds} s before reading memory, ${new Date().toISOString()}\n`);
  console.log(table(rows));
  console.log('\ntargets: ready <= 12 s after the first build (second start), all five <= 1024 MiB resident');
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
