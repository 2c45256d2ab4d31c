// users-service process: see runService for the life cycle.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceTokenSource } from '@platform/auth';
import { serviceDatabase } from '@platform/db';
import { connectNatsIfConfigured, EmbeddedTransport, startOutboxRelay } from '@platform/events';
import { configOrExit, runService } from '@platform/service-kit';
import { createUsersApp } from './app';
import { redisRevocationPublisher } from './credentials/revocations';
import { loadUsersConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

const config = configOrExit('users-service', loadUsersConfig);

runService({
  name: 'users-service',
  config,
  database: serviceDatabase({ migrationsDir: path.join(__dirname, 'migrations'), createClient: (adapter) => new PrismaClient({ adapter }) }),
  async build({ logger, health, metrics, database }) {
    if (!database) throw new Error('runService opens the database before build');
    // With REDIS_URL, password changes and deletions reach every gateway within a second (libs/auth revocations.ts).
    const revocations = config.REDIS_URL ? redisRevocationPublisher(config.REDIS_URL, logger) : undefined;
    // Committed outbox rows to the transport: NATS JetStream when NATS_URL is set; otherwise the
    // outbox is the log, read by consumers at /internal/events.
    const transport = (await connectNatsIfConfigured(config.NATS_URL, { name: 'users-service', logger })) ?? new EmbeddedTransport({ producers: {}, serviceToken: serviceTokenSource(config.jwtSecret, 'users-service'), logger });
    const events = await startOutboxRelay(database, transport, logger, { service: 'users-service', pollMs: config.EVENTS_POLL_MS }, metrics.registry);
    const { app, users } = await createUsersApp({ config, prisma: database.prisma, logger, health, metrics, revocations });
    return {
      app,
      resources: [events.stop, () => transport.close(), async () => revocations?.stop()],
      beforeListen: async () => {
        const outcome = await users.bootstrapAdmin(config.ADMIN_EMAIL, config.ADMIN_PASSWORD);
        logger.info({ email: config.ADMIN_EMAIL, outcome }, 'admin account');
      },
    };
  },
});
