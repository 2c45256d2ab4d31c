// The life of a service process, the same for every app: read config → open the database →
// build the app → listen → stop cleanly on SIGTERM. `main.js migrate` applies pending
// migrations to DATABASE_URL and exits (the Kubernetes migration Job).
import type { RequestListener } from 'node:http';
import { type Database, migratePostgres, openDatabase, type PrismaLike } from '@platform/db';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { BaseConfig, LoadedConfig } from './config';
import { createStopper, stopOnSignals, stoppableHttpServer, type Stoppable } from './graceful-stop';
import { Health } from './health';
import { listen } from './listen';
import { createLogger, type Logger } from './logger';
import { stopTracing } from '@platform/tracing';
import { createMetrics, type Metrics } from './metrics';
import { handleProcessFaults } from './process-faults';

export interface ServiceContext<P> {
  logger: Logger;
  health: Health;
  metrics: Metrics;
  /** Undefined for apps without a database (the gateway). */
  database?: Database<P>;
}

export interface BuiltService {
  app: RequestListener;
  /** Runs after the app is built, before it listens (seeding, admin bootstrap). */
  beforeListen?: () => Promise<void>;
  /** More listeners to drain on stop (a gRPC server). */
  listeners?: Stoppable[];
  /** Closed after the listeners, before the database. */
  resources?: (() => Promise<void>)[];
}

export interface ServiceDefinition<P extends PrismaLike> {
  name: string;
  config: BaseConfig & LoadedConfig & { PORT: number };
  database?: { migrationsDir: string; createClient: (adapter: SqlDriverAdapterFactory) => P };
  build(context: ServiceContext<P>): Promise<BuiltService>;
}

async function run<P extends PrismaLike>(definition: ServiceDefinition<P>): Promise<void> {
  const { config, name } = definition;
  const logger = createLogger(name, config.LOG_LEVEL);
  for (const warning of config.warnings) logger.warn(warning);
  handleProcessFaults(logger);

  if (process.argv[2] === 'migrate') {
    if (!definition.database) throw new Error(`${name} has no database to migrate`);
    if (!config.DATABASE_URL) throw new Error('migrate needs DATABASE_URL (the embedded database migrates itself at start)');
    logger.info(await migratePostgres(config.DATABASE_URL, definition.database.migrationsDir), 'migrations applied');
    return;
  }

  const health = new Health();
  const metrics = createMetrics(name);
  let database: Database<P> | undefined;
  if (definition.database) {
    database = await openDatabase({
      service: name,
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      migrationsDir: definition.database.migrationsDir,
      // The embedded database is this process's own; PostgreSQL is migrated by the Job.
      migrate: !config.DATABASE_URL,
      createClient: definition.database.createClient,
      registry: metrics.registry,
    });
    health.addCheck('database', database.ping);
    logger.info({ database: database.kind, migrations: database.migrations }, 'database open');
  }

  const built = await definition.build({ logger, health, metrics, database });
  await built.beforeListen?.();
  // A request must arrive within the budget a request has: a body that stalls is cut with 408.
  const server = await listen(built.app, config.PORT, undefined, { requestTimeoutMs: config.REQUEST_TIMEOUT_MS });
  logger.info({ port: server.port }, `${name} ready`);

  const stop = createStopper({
    logger,
    health,
    listeners: [stoppableHttpServer(server.server), ...(built.listeners ?? [])],
    // Last: the spans of the requests that just finished still go out.
    resources: [...(built.resources ?? []), ...(database ? [database.close] : []), stopTracing],
    drainMs: config.SHUTDOWN_DRAIN_MS,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  });
  stopOnSignals(stop, logger);
}

/** Starts the service; on a start-up error prints it and exits 1. */
export function runService<P extends PrismaLike>(definition: ServiceDefinition<P>): void {
  run(definition).catch((error: unknown) => {
    console.error(`${definition.name} failed to start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
