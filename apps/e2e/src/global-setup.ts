// Starts the five apps with tools/start/start.js (the script behind `npm start`), on PGlite and
// in-memory limits by default, or on PostgreSQL and Redis when TEST_DATABASE_URL / TEST_REDIS_URL
// are set (one fresh database per service, migrated as the Kubernetes Job would).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Client } from 'pg';
import { ADMIN, PORT_OFFSET, STATE_ENV, type StackState } from './stack';

const root = path.resolve(__dirname, '../../..');

async function createDatabases(serverUrl: string): Promise<Record<string, string>> {
  const suffix = randomBytes(4).toString('hex');
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  const urls: Record<string, string> = {};
  for (const service of ['USERS', 'ORDERS', 'CATALOG', 'INVENTORY']) {
    const name = `e2e_${service.toLowerCase()}_${suffix}`;
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    urls[`DATABASE_URL_${service}`] = url.toString();
  }
  await admin.end();
  return urls;
}

export default async function globalSetup(): Promise<void> {
  process.env.APOLLO_TELEMETRY_DISABLED = 'true';
  const databases = process.env.TEST_DATABASE_URL ? await createDatabases(process.env.TEST_DATABASE_URL) : {};
  mkdirSync(path.join(root, 'tmp'), { recursive: true });
  const logFile = path.join(root, 'tmp/e2e-stack.log');
  const log = createWriteStream(logFile);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...databases,
    PORT_OFFSET: String(PORT_OFFSET),
    SKIP_BUILD: 'true',
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'e2e-data-')),
    JWT_SECRET: randomBytes(32).toString('hex'),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_POINTS: '100000',
    RATE_LIMIT_TOKENS_POINTS: '5',
    RATE_LIMIT_TOKENS_IP_POINTS: '100000',
    ORDERS_SWEEP_MS: '200',
    ROUTE_DEPRECATIONS: JSON.stringify([{ pattern: '/order-items/:id', deprecation: '2026-01-01T00:00:00Z', sunset: '2027-01-01T00:00:00Z', link: 'https://docs.example.com/deprecations/order-items' }]),
  };
  delete env.DATABASE_URL;
  if (process.env.TEST_REDIS_URL) env.REDIS_URL = process.env.TEST_REDIS_URL;
  else delete env.REDIS_URL;

  const starter = spawn(process.execPath, [path.join(root, 'tools/start/start.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  starter.stderr.pipe(log);
  const pids: Record<string, number> = {};
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the stack did not become ready in 90 s; see ${logFile}`)), 90_000);
      readline.createInterface({ input: starter.stdout }).on('line', (line) => {
        log.write(`${line}\n`);
        const pid = /\[start\]\S* (\S+) pid (\d+)/.exec(line);
        if (pid) pids[pid[1]] = Number(pid[2]);
        if (/all \d+ apps ready/.test(line)) {
          clearTimeout(timer);
          resolve();
        }
        if (/not ready|failed|exited/.test(line)) {
          clearTimeout(timer);
          reject(new Error(`the stack failed to start: ${line}; see ${logFile}`));
        }
      });
      starter.once('exit', (code) => reject(new Error(`start.js exited with ${code}; see ${logFile}`)));
    });
  } catch (error) {
    // Leave nothing running: start.js stops the apps it started before it exits.
    if (starter.exitCode === null) {
      const exited = new Promise((resolve) => starter.once('exit', resolve));
      starter.kill('SIGINT');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
    }
    throw error;
  }
  const state: StackState = { pids, starterPid: starter.pid!, databases: Object.values(databases), logFile };
  process.env[STATE_ENV] = JSON.stringify(state);
  process.env.E2E_JWT_SECRET = env.JWT_SECRET;
}
