// One fault case's world: a redis-server and a PostgreSQL cluster of its own (never the shared
// ones), one database per service on that cluster, and the five built apps started by start.js
// as `npm start` and the e2e suite do, on FAULT_PORT_OFFSET (8000: beside a development stack
// and the e2e suite's 10000). `stop` removes everything, whatever happened before.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createDatabases, PostgresCluster, RedisServer, Stack, stackPorts, tokenFor } from '@platform/test-kit';

export const OFFSET = Number(process.env.FAULT_PORT_OFFSET ?? 8_000);
export const ports = stackPorts(OFFSET);
export const gatewayUrl = `http://127.0.0.1:${ports.gateway}`;

const root = path.resolve(__dirname, '../../..');

export interface FaultStack {
  redis: RedisServer;
  postgres: PostgresCluster;
  /** DATABASE_URL_<APP> → that service's database on `postgres`. */
  databases: Record<string, string>;
  /** Process ids of the running apps, restarted ones included. */
  pids: Record<string, number>;
  /** start.js's lines, e.g. an app's exit (`<app> exited (<code or signal>)`). */
  nextLine(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** A token for a made-up customer, signed as users-service would. */
  customer(): Promise<{ token: string; userId: string }>;
  /** Starts `app` again after it was killed, the way the stack started it (but without migrating). */
  restart(app: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the world of case `name`; `env` adds to (or overrides) every app's settings. */
export async function startFaultStack(name: string, env: Record<string, string> = {}): Promise<FaultStack> {
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
    // Last started, first stopped; each once.
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error: unknown) => console.error(`fault-tests ${name}: cleanup failed`, error));
  };
  try {
    const redis = await RedisServer.start();
    cleanups.push(() => redis.stop());
    const postgres = await PostgresCluster.start();
    cleanups.push(() => postgres.remove());
    const databases = await createDatabases(postgres.url(), 'fault');
    const dataDir = mkdtempSync(path.join(tmpdir(), `fault-${name}-`));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const jwtSecret = randomBytes(32).toString('hex');
    const appEnv: NodeJS.ProcessEnv = {
      ...process.env,
      ...databases,
      REDIS_URL: redis.url,
      DATA_DIR: dataDir,
      JWT_SECRET: jwtSecret,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_POINTS: '100000',
      RATE_LIMIT_TOKENS_POINTS: '1000',
      RATE_LIMIT_TOKENS_IP_POINTS: '100000',
      ORDERS_SWEEP_MS: '200',
      ...env,
    };
    delete appEnv.DATABASE_URL;
    const logFile = (suffix: string) => path.join(root, `tmp/fault-${name}${suffix}.log`);
    const stacks: Stack[] = [];
    cleanups.push(async () => {
      for (const stack of stacks) await stack.stop();
    });
    stacks.push(await Stack.start({ offset: OFFSET, env: appEnv, logFile: logFile('') }));
    let users: Promise<Client> | undefined;
    const usersDatabase = () =>
      (users ??= (async () => {
        const client = new Client({ connectionString: databases.DATABASE_URL_USERS });
        await client.connect();
        cleanups.push(() => client.end());
        return client;
      })());
    const pids = { ...stacks[0].pids };
    let restarts = 0;
    return {
      redis,
      postgres,
      databases,
      pids,
      nextLine: (pattern, timeoutMs) => stacks[0].nextLine(pattern, timeoutMs),
      // A real user row (the gateway refuses tokens of users that do not exist), written straight
      // into the users database: signing up forty customers through the API would cost seconds.
      // One connection for all of them (queries queue on it), so a crowd of customers stays
      // within the cluster's connection limit.
      customer: async () => {
        const customer = await tokenFor(jwtSecret);
        const email = `fault-${customer.userId}@example.com`;
        await (await usersDatabase()).query("INSERT INTO users (id, name, email, email_key, password_hash, updated_at) VALUES ($1, 'Fault customer', $2, $2, 'not-a-hash', now())", [customer.userId, email]);
        return customer;
      },
      // As Kubernetes restarts a killed container: in its pod, without the `migrate` init container
      // (its database is migrated already; a migration run costs each restart 1 to 2 s, and the
      // events case restarts sixty times).
      restart: async (app) => {
        restarts += 1;
        const again = await Stack.start({ offset: OFFSET, env: { ...appEnv, SKIP_MIGRATIONS: 'true' }, logFile: logFile(`-restart-${restarts}`), apps: [app] });
        stacks.push(again);
        pids[app] = again.pids[app];
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Polls `check` until it holds, at most `timeoutMs`. */
export async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The store the gateway counts rate limits in now, read from its metrics as an operator would. */
export async function rateLimitStore(): Promise<string | undefined> {
  const text = await (await fetch(`http://127.0.0.1:${ports.metrics}/metrics`)).text();
  return /^gateway_rate_limit_store\{[^}]*store="(\w+)"[^}]*\} 1$/m.exec(text)?.[1];
}

/** What a test measured, in its output. */
export function report(line: string): void {
  console.info(`[fault-tests] ${line}`);
}
