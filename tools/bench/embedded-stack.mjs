#!/usr/bin/env node
// The embedded stack as `npm start` runs it (PGlite, in-memory limits): time to ready and idle
// resident memory of the five apps, on a fresh DATA_DIR (initdb, migrations, demo data) and
// again on the same one, as a developer's second start finds it. Loopback only; stops itself.
// Targets: ready in 12 s or less after the first build, 1 GiB resident or less for all five.
// Memory is read twice: 5 s after ready, while V8 still holds the young generation that start-up
// grew, and 60 s after, once its memory reducer has run (it shrinks the heap of a process that
// has stopped allocating, some 10-60 s in): that second figure is what an idle stack holds.
// Beside each reading, the CPU the apps spent since the one before (utime + stime from /proc, in
// ms per second): from ready + 60 s to + 90 s, with no request, that is what an idle stack costs
// (the event relays' and readers' polls, timers).
// Usage: node tools/bench/embedded-stack.mjs [seconds after ready to read, default 5,60,90]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { root, table } from './stack.mjs';

const readAt = (process.argv[2] ?? '5,60,90').split(',').map(Number);
const OFFSET = 6_500;

/** Resident memory of a process, MiB, from /proc (Linux). */
const residentMiB = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
/** CPU time a process has used, ms: utime + stime from /proc (Linux counts them in 1/100 s). */
const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

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
      // The starter's own lines only: an app's log line may say "failed" (a consumer retrying a producer still starting).
      if (line.includes('[start]') && /not ready|failed/.test(line)) reject(new Error(line));
    });
    starter.once('exit', (code) => reject(new Error(`start.js exited ${code}`)));
  });
  const readyAt = Date.now();
  const memory = {};
  const cpu = {};
  let lastCpu = Object.fromEntries(Object.entries(apps).map(([app, pid]) => [app, cpuMs(pid)]));
  let lastAt = Date.now();
  for (const seconds of readAt) {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, readyAt + seconds * 1_000 - Date.now())));
    memory[seconds] = Object.fromEntries(Object.entries(apps).map(([app, pid]) => [app, residentMiB(pid)]));
    const nowCpu = Object.fromEntries(Object.entries(apps).map(([app, pid]) => [app, cpuMs(pid)]));
    const elapsedS = (Date.now() - lastAt) / 1_000;
    cpu[seconds] = Object.values(nowCpu).reduce((sum, ms) => sum + ms, 0) / elapsedS - Object.values(lastCpu).reduce((sum, ms) => sum + ms, 0) / elapsedS;
    [lastCpu, lastAt] = [nowCpu, Date.now()];
  }
  await new Promise((resolve) => {
    starter.once('exit', resolve);
    starter.kill('SIGINT');
  });
  return { seconds, memory, cpu };
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'embedded-stack-'));
try {
  const runs = [['fresh DATA_DIR', await startOnce(dataDir)], ['second start, same DATA_DIR', await startOnce(dataDir)]];
  const apps = Object.keys(runs[0][1].memory[readAt[0]]);
  const rows = runs.flatMap(([name, run]) =>
    readAt.map((seconds) => ({
      start: name,
      'ready s': run.seconds.toFixed(1),
      'read at': `ready + ${seconds} s`,
      ...Object.fromEntries(apps.map((app) => [`${app} MiB`, run.memory[seconds][app].toFixed(0)])),
      'all five MiB': Object.values(run.memory[seconds]).reduce((sum, value) => sum + value, 0).toFixed(0),
      'CPU ms/s since the reading before': run.cpu[seconds].toFixed(0),
    })),
  );
  console.log(`\nresident memory (VmRSS) of each app, ${new Date().toISOString()}\n`);
  console.log(table(rows));
  console.log('\ntargets: ready <= 12 s after the first build (second start), all five <= 1024 MiB resident');
  console.log('idle CPU: the last row of each start (no request since ready), all five apps');
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
