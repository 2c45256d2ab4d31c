// `npm run start:cluster`: the production topology on this machine. Builds the apps, creates
// each service's database on PostgreSQL if it is missing, and starts two replicas of every app
// behind one HAProxy (libs/test-kit's Cluster, the one the cluster tests run), on real PostgreSQL
// and Redis, with events over a nats-server (JetStream) of its own unless NATS_URL names one.
// Ctrl-C stops everything.
//
//   DATABASE_SERVER_URL   where the databases live (postgresql://postgres@127.0.0.1:5432/postgres)
//   DATABASE_URL_<APP>    one service's database instead (USERS, ORDERS, CATALOG, INVENTORY)
//   REDIS_URL             the gateways' shared rate limits (redis://127.0.0.1:6379)
//   NATS_URL              the event broker (JetStream); unset: a nats-server of the cluster's own
//   PORT_OFFSET           moves every port, as with `npm start`
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Cluster, CLUSTER_APPS, ensureDatabases, NatsServer, workspaceRoot } from '@platform/test-kit';

const SERVICES = { USERS: 'users', ORDERS: 'orders', CATALOG: 'catalog', INVENTORY: 'inventory' };

function say(message: string): void {
  process.stdout.write(`\x1b[1m[cluster]\x1b[0m ${message}\n`);
}

async function run(): Promise<void> {
  process.env.APOLLO_TELEMETRY_DISABLED = 'true';
  const root = workspaceRoot();
  const offset = Number(process.env.PORT_OFFSET ?? 0);
  const started = Date.now();

  if (process.env.SKIP_BUILD !== 'true') {
    say('building apps (nx, cached)…');
    const build = spawnSync('npx', ['nx', 'run-many', '-t', 'build', `--projects=${CLUSTER_APPS.join(',')}`, '--outputStyle=static'], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true' },
    });
    if (build.status !== 0) throw new Error('build failed');
  }

  const server = process.env.DATABASE_SERVER_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  const databases: Record<string, string> = {};
  for (const [key, service] of Object.entries(SERVICES)) {
    const url = new URL(server);
    url.pathname = `/cluster_${service}`;
    databases[`DATABASE_URL_${key}`] = process.env[`DATABASE_URL_${key}`] ?? url.toString();
  }
  await ensureDatabases(Object.values(databases));
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  // The broker, as in the deployment: given, or a nats-server of this cluster's own (Debian's
  // nats-server; a temporary store, removed at the end), on a free port.
  const nats = process.env.NATS_URL ? undefined : await NatsServer.start().catch((error: unknown) => {
    throw new Error(`could not start nats-server (install it: apt-get install nats-server, or set NATS_URL): ${error instanceof Error ? error.message : String(error)}`);
  });
  const natsUrl = process.env.NATS_URL ?? (nats as NatsServer).url;

  const logDir = path.join(root, 'tmp/cluster');
  mkdirSync(logDir, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, ...databases, REDIS_URL: redisUrl, NATS_URL: natsUrl };
  delete env.DATABASE_URL;
  say(`starting HAProxy and two replicas of ${CLUSTER_APPS.length} apps (logs in ${path.relative(process.cwd(), logDir) || '.'}/)…`);
  // Cluster.start stops what it started when it fails; the broker is this script's to stop.
  const cluster = await Cluster.start({ offset, env, logDir }).catch(async (error: unknown) => {
    await nats?.stop();
    throw error;
  });

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    void cluster.stop().then(async () => {
      await nats?.stop();
      say('all stopped');
      process.exit(0);
    });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', stop);

  const { door, stats, replicas } = cluster.ports;
  say(`ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  say(`gateway:  http://localhost:${door.gateway}  (HAProxy, the one door: REST under /v1, GraphQL at /v1/graphql)`);
  say(`gRPC:     localhost:${door.grpc}  (HAProxy, HTTP/2 to inventory)`);
  say(`HAProxy:  http://localhost:${stats}/  (servers and their checks; Prometheus metrics at /metrics)`);
  replicas.forEach((ports, index) => say(`replica ${index + 1}: gateway ${ports.gateway}, users ${ports.users}, orders ${ports.orders}, catalog ${ports.catalog}, inventory ${ports.inventory} (gRPC ${ports.grpc})`));
  say(`data:     ${Object.values(databases).map((url) => new URL(url).pathname.slice(1)).join(', ')} on ${new URL(server).host}; Redis ${new URL(redisUrl).host}; NATS ${natsUrl}`);
  say('responses name the replicas that served them: X-Served-By (e.g. "orders-2, gateway-1").');
  say(`admin:    ${process.env.ADMIN_EMAIL ?? 'admin@example.com'} / ${process.env.ADMIN_PASSWORD ? '(ADMIN_PASSWORD)' : 'admin-password  (development default)'}`);
  say('Ctrl-C stops everything.');
}

/** Run by tools/ts-run.mjs. */
export async function main(): Promise<void> {
  await run().catch((error: unknown) => {
    say(`failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
