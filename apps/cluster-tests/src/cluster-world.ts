// One cluster test's world: a PostgreSQL cluster, a redis-server and a nats-server (JetStream, the
// event broker) of its own (never the shared ones: eight service processes hold connection pools), one database per service on it, and the
// cluster `npm run start:cluster` starts (two replicas of every app behind HAProxy) on
// CLUSTER_PORT_OFFSET (12000: beside a development stack, the e2e suite's 10000 and the fault
// suite's 8000). Clients go through HAProxy only; `stop` removes everything.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { Cluster, createDatabases, NatsServer, PostgresCluster, RedisServer, tokenFor, workspaceRoot } from '@platform/test-kit';

export const OFFSET = Number(process.env.CLUSTER_PORT_OFFSET ?? 12_000);
export const ADMIN = { email: 'cluster-admin@example.com', password: 'cluster-admin-password' };

export interface ClusterWorld {
  cluster: Cluster;
  jwtSecret: string;
  /** DATABASE_URL_<APP> → that service's database. */
  databases: Record<string, string>;
  /** A connection to one service's database (USERS, ORDERS, CATALOG, INVENTORY), closed by `stop`. */
  database(service: string): Promise<Client>;
  /** A token for a made-up customer whose user row exists (the gateway refuses others). */
  customer(): Promise<{ token: string; userId: string }>;
  stop(): Promise<void>;
}

/** Starts the world of test file `name`; `env` adds to (or overrides) every app's settings. */
export async function startClusterWorld(name: string, env: Record<string, string> = {}): Promise<ClusterWorld> {
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error: unknown) => console.error(`cluster-tests ${name}: cleanup failed`, error));
  };
  try {
    const redis = await RedisServer.start();
    cleanups.push(() => redis.stop());
    // Events travel over JetStream, as in the deployment: both replicas of a consumer share its durable consumers.
    const nats = await NatsServer.start();
    cleanups.push(() => nats.stop());
    // Eight pools of up to ten connections, their LISTEN connections, migrations and the test's own.
    const postgres = await PostgresCluster.start({ maxConnections: 200 });
    cleanups.push(() => postgres.remove());
    const databases = await createDatabases(postgres.url(), 'cluster');
    const dataDir = mkdtempSync(path.join(tmpdir(), `cluster-${name}-`));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const jwtSecret = randomBytes(32).toString('hex');
    const appEnv: NodeJS.ProcessEnv = {
      ...process.env,
      ...databases,
      REDIS_URL: redis.url,
      NATS_URL: nats.url,
      DATA_DIR: dataDir,
      JWT_SECRET: jwtSecret,
      ADMIN_EMAIL: ADMIN.email,
      ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'warn',
      ORDERS_SWEEP_MS: '200',
      ...env,
    };
    delete appEnv.DATABASE_URL;
    const logDir = path.join(workspaceRoot(), `tmp/cluster-${name}`);
    mkdirSync(logDir, { recursive: true });
    const cluster = await Cluster.start({ offset: OFFSET, env: appEnv, logDir });
    cleanups.push(() => cluster.stop());

    const connections = new Map<string, Promise<Client>>();
    const database = (service: string) => {
      let connection = connections.get(service);
      if (!connection) {
        connection = (async () => {
          const client = new Client({ connectionString: databases[`DATABASE_URL_${service}`] });
          await client.connect();
          cleanups.push(() => client.end());
          return client;
        })();
        connections.set(service, connection);
      }
      return connection;
    };
    return {
      cluster,
      jwtSecret,
      databases,
      database,
      // A real user row written straight into the users database: signing up through the API
      // would spend the per-IP token budget and seconds of password hashing.
      customer: async () => {
        const customer = await tokenFor(jwtSecret);
        const email = `cluster-${customer.userId}@example.com`;
        await (await database('USERS')).query("INSERT INTO users (id, name, email, email_key, password_hash, updated_at) VALUES ($1, 'Cluster customer', $2, $2, 'not-a-hash', now())", [customer.userId, email]);
        return customer;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** What a test measured, in its output. */
export function report(line: string): void {
  console.info(`[cluster-tests] ${line}`);
}
