// The life of a service process, the same for every app: read config → open the database →
// build the app → listen → stop cleanly on SIGTERM. `main.js migrate` applies pending
// migrations to DATABASE_URL and exits (in Kubernetes, each pod's `migrate` init container).
import type { RequestListener } from 'node:http';
import type { BaseConfig, LoadedConfig } from './config';
import { createStopper, stopOnSignals, stoppableHttpServer, type Stoppable } from './graceful-stop';
import { Health } from './health';
import { type ConnectionLimits, listen } from './listen';
import { createLogger, type Logger } from './logger';
import { stopTracing } from '@platform/tracing';
import { createMetrics, type Metrics } from './metrics';
import type { Registry } from 'prom-client';
import { handleProcessFaults } from './process-faults';

/**
 * What runService needs of an open database. The database library (@platform/db's
 * `serviceDatabase`) provides it, so this kit, and the gateway that has no database, never load
 * a database driver.
 */
export interface OpenDatabase {
  kind: string;
  migrations?: unknown;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface DatabaseOpener<D extends OpenDatabase> {
  open(settings: { service: string; databaseUrl?: string; dataDir: string; registry: Registry }): Promise<D>;
  /** `main.js migrate`: applies pending migrations to databaseUrl; what it returns is logged. */
  migrate(databaseUrl: string): Promise<unknown>;
}

export interface ServiceContext<D extends OpenDatabase> {
  logger: Logger;
  health: Health;
  metrics: Metrics;
  /** Undefined for apps without a database (the gateway). */
  database?: D;
}

export interface BuiltService {
  app: RequestListener;
  /** Runs after the app is built, before it listens (seeding, admin bootstrap). */
  beforeListen?: () => Promise<void>;
  /** More listeners to drain on stop (a gRPC server). */
  listeners?: Stoppable[];
  /** Closed after the listeners, before the database. */
  resources?: (() => Promise<void>)[];
  /** Connections the app's port holds at once (the gateway's public door); unset: no limit. */
  connections?: ConnectionLimits;
}

export interface ServiceDefinition<D extends OpenDatabase> {
  name: string;
  config: BaseConfig & LoadedConfig & { PORT: number };
  database?: DatabaseOpener<D>;
  build(context: ServiceContext<D>): Promise<BuiltService>;
}

async function run<D extends OpenDatabase>(definition: ServiceDefinition<D>): Promise<void> {
  const { config, name } = definition;
  const logger = createLogger(name, config.LOG_LEVEL);
  for (const warning of config.warnings) logger.warn(warning);
  handleProcessFaults(logger);

  if (process.argv[2] === 'migrate') {
    if (!definition.database) throw new Error(`${name} has no database to migrate`);
    if (!config.DATABASE_URL) throw new Error('migrate needs DATABASE_URL (the embedded database migrates itself at start)');
    logger.info(await definition.database.migrate(config.DATABASE_URL), 'migrations applied');
    return;
  }

  const health = new Health();
  const metrics = createMetrics(name);
  let database: D | undefined;
  if (definition.database) {
    database = await definition.database.open({ service: name, databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, registry: metrics.registry });
    health.addCheck('database', database.ping);
    logger.info({ database: database.kind, migrations: database.migrations }, 'database open');
  }

  const built = await definition.build({ logger, health, metrics, database });
  await built.beforeListen?.();
  // A request must arrive within the budget a request has: a body that stalls is cut with 408.
  const server = await listen(built.app, config.PORT, config.LISTEN_HOST, { requestTimeoutMs: config.REQUEST_TIMEOUT_MS, connections: built.connections });
  logger.info({ host: config.LISTEN_HOST, port: server.port }, `${name} ready`);

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
export function runService<D extends OpenDatabase>(definition: ServiceDefinition<D>): void {
  run(definition).catch((error: unknown) => {
    console.error(`${definition.name} failed to start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
