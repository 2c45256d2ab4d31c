// Starts the five apps with tools/start/start.js (the script behind `npm start`), on PGlite and
// in-memory limits by default, or on PostgreSQL and Redis when TEST_DATABASE_URL / TEST_REDIS_URL
// are set (one fresh database per service, migrated as the Kubernetes Job would).
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDatabases, Stack } from '@platform/test-kit';
import { resetContractCounts } from './contract';
import { startSpanReceiver } from './span-receiver';
import { ADMIN, gatewayUrl, PORT_OFFSET, STATE_ENV, type StackState } from './stack';

const root = path.resolve(__dirname, '../../..');

export default async function globalSetup(): Promise<void> {
  process.env.APOLLO_TELEMETRY_DISABLED = 'true';
  resetContractCounts();
  const databases = process.env.TEST_DATABASE_URL ? await createDatabases(process.env.TEST_DATABASE_URL, 'e2e') : {};
  const logFile = path.join(root, 'tmp/e2e-stack.log');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...databases,
    DATA_DIR: mkdtempSync(path.join(tmpdir(), 'e2e-data-')),
    // The usage store's keys of this stack alone, on a Redis other stacks share.
    USAGE_KEY_PREFIX: `usage:e2e:${randomBytes(6).toString('hex')}`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    ADMIN_EMAIL: ADMIN.email,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'info', // every request's line, which logs.e2e.test.ts reads for secrets
    RATE_LIMIT_POINTS: '100000',
    RATE_LIMIT_TOKENS_POINTS: '5',
    RATE_LIMIT_TOKENS_IP_POINTS: '100000',
    // The suites call from 127.0.0.1, the one trusted proxy; the OWASP suite spoofs X-Forwarded-For from another loopback address.
    TRUST_PROXY: '127.0.0.1',
    ORDERS_SWEEP_MS: '200',
    // The webhook suite's receiver listens on 127.0.0.1; production manifests keep this false.
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_DISPATCH_MS: '200',
  };
  delete env.DATABASE_URL;
  if (process.env.TEST_REDIS_URL) env.REDIS_URL = process.env.TEST_REDIS_URL;
  else delete env.REDIS_URL;

  // Every app exports its spans to a receiver of the suite's own (tracing.e2e.test.ts reads them).
  const spansFile = path.join(root, 'tmp/e2e-spans.jsonl');
  mkdirSync(path.dirname(spansFile), { recursive: true });
  const receiver = await startSpanReceiver(spansFile);
  (globalThis as { spanReceiver?: Server }).spanReceiver = receiver.server;
  Object.assign(env, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '200' });

  const stack = await Stack.start({ offset: PORT_OFFSET, env, logFile });
  const signIn = await fetch(`${gatewayUrl}/v1/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  if (signIn.status !== 200) throw new Error(`the e2e admin could not sign in: ${signIn.status} ${await signIn.text()}`);
  const { accessToken: adminToken } = (await signIn.json()) as { accessToken: string };
  const state: StackState = { pids: stack.pids, starterPid: stack.starterPid, databases: Object.values(databases), logFile, spansFile, adminToken };
  process.env[STATE_ENV] = JSON.stringify(state);
  process.env.E2E_JWT_SECRET = env.JWT_SECRET;
  // Where the stack's usage store is (replacement.e2e.test.ts exports it as a service team would).
  Object.assign(process.env, { E2E_DATA_DIR: env.DATA_DIR, E2E_USAGE_KEY_PREFIX: env.USAGE_KEY_PREFIX, E2E_REDIS_URL: env.REDIS_URL ?? '' });
}
