#!/usr/bin/env node
// What the services' common pipeline (service-kit's createService) costs a request, by stage:
// an empty handler behind it (tools/bench/service-pipeline/server.ts), with every feature on as
// in bench:gateway (request logs at info, metrics, the token check, tracing to an OTLP sink at
// 10 %), under `node --cpu-prof`; 50 connections call GET /empty for the given seconds after a
// warm-up, and the samples of that window are grouped by stage as gateway-profile.mjs does.
// Loopback only. Usage: node tools/bench/service-pipeline.mjs [seconds, default 20]
// BENCH_PORT_OFFSET moves its ports (default that of stack.mjs).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';
import { build } from 'esbuild';
import { report, stagesOf } from './gateway-profile.mjs';
import { cpuMsOf, FEATURES_ENV, listenOn, port, root } from './stack.mjs';

const seconds = Number(process.argv[2] ?? 20);
const bundle = path.join(root, 'tmp/service-pipeline/server.cjs');
await build({ entryPoints: [path.join(root, 'tools/bench/service-pipeline/server.ts')], outfile: bundle, bundle: true, platform: 'node', target: 'node20', format: 'cjs', packages: 'external', sourcemap: true, tsconfig: path.join(root, 'tsconfig.base.json'), logLevel: 'warning' });

const otlp = await listenOn(createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end())), port(4318));
const profileDir = mkdtempSync(path.join(tmpdir(), 'service-pipeline-'));
const server = spawn(process.execPath, [...JSON.parse(readFileSync(path.join(root, 'tools/start/node-flags.json'), 'utf8')), '--cpu-prof', `--cpu-prof-dir=${profileDir}`, bundle], {
  cwd: root,
  env: { ...process.env, NODE_ENV: 'production', ...FEATURES_ENV, PORT: String(port(3009)) },
  stdio: ['ignore', 'pipe', 'pipe'],
});
try {
  // Request logs are read as a log shipper would, and dropped.
  server.stdout.resume();
  const [listening, token] = await new Promise((resolve, reject) => {
    readline.createInterface({ input: server.stderr }).on('line', (line) => {
      const started = /^listening (\d+) (\S+)$/.exec(line);
      if (started) resolve([Number(started[1]), started[2]]);
      else process.stderr.write(`${line}\n`);
    });
    server.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening`)));
  });
  const request = { url: `http://127.0.0.1:${listening}/empty`, headers: { authorization: `Bearer ${token}` } };
  await autocannon({ ...request, connections: 50, duration: 5 });
  const from = Number(process.hrtime.bigint() / 1000n);
  const cpuBefore = cpuMsOf(server.pid);
  const result = await autocannon({ ...request, connections: 50, duration: seconds });
  const cpuMs = cpuMsOf(server.pid) - cpuBefore;
  const to = Number(process.hrtime.bigint() / 1000n);
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
  await new Promise((resolve) => {
    server.once('exit', resolve);
    server.kill('SIGTERM');
  });
  const file = path.join(profileDir, readdirSync(profileDir).find((name) => name.endsWith('.cpuprofile')));
  report(stagesOf(JSON.parse(readFileSync(file, 'utf8')), { from, to, bundle }), result.requests.total, `createService, empty handler, GET /empty with a token, 50 connections, ${seconds} s, ${result.requests.total} requests (${Math.round(result.requests.average)} req/s), profile ${file}, ${new Date().toISOString()}`);
  console.log(`\nREQUESTS=${result.requests.total} WINDOW=${from},${to} to analyse it again`);
  console.log(`\nprocess CPU (user + system, /proc, profiler included): ${((cpuMs * 1000) / result.requests.total).toFixed(0)} µs per request`);
} finally {
  if (server.exitCode === null) server.kill('SIGTERM');
  otlp.close();
}
