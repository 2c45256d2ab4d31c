// users-service: read config → open the database → build the app → listen → stop cleanly.
// `main.js migrate` applies pending migrations and exits (the Kubernetes migration Job).
import path from 'node:path';
import { migratePostgres, openDatabase } from '@platform/db';
import { createLogger, createMetrics, createStopper, Health, listen, stopOnSignals, stoppableHttpServer } from '@platform/service-kit';
import { PrismaClient } from './generated/prisma/client';
import { createUsersApp } from './app';
import { loadUsersConfig } from './config';

const SERVICE = 'users-service';
const migrationsDir = path.join(__dirname, 'migrations');

async function main(): Promise<void> {
  const config = loadUsersConfig();
  const logger = createLogger(SERVICE, config.LOG_LEVEL);
  for (const warning of config.warnings) logger.warn(warning);

  if (process.argv[2] === 'migrate') {
    if (!config.DATABASE_URL) throw new Error('migrate needs DATABASE_URL (the embedded database migrates itself at start)');
    logger.info(await migratePostgres(config.DATABASE_URL, migrationsDir), 'migrations applied');
    return;
  }

  const database = await openDatabase({
    service: SERVICE,
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    migrationsDir,
    migrate: !config.DATABASE_URL,
    createClient: (adapter) => new PrismaClient({ adapter }),
  });
  logger.info({ database: database.kind, migrations: database.migrations }, 'database open');

  const health = new Health().addCheck('database', database.ping);
  const { app, users, stopGraphql } = await createUsersApp({ config, prisma: database.prisma, logger, health, metrics: createMetrics(SERVICE) });
  const outcome = await users.bootstrapAdmin(config.ADMIN_EMAIL, config.ADMIN_PASSWORD);
  logger.info({ email: config.ADMIN_EMAIL, outcome }, 'admin account');

  const server = await listen(app, config.PORT);
  logger.info({ port: server.port }, `${SERVICE} ready`);
  const stop = createStopper({
    logger,
    health,
    listeners: [stoppableHttpServer(server.server)],
    resources: [stopGraphql, database.close],
    drainMs: config.SHUTDOWN_DRAIN_MS,
    timeoutMs: config.SHUTDOWN_TIMEOUT_MS,
  });
  stopOnSignals(stop, logger);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
