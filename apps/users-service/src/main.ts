// users-service process: see runService for the life cycle.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceTokenSource } from '@platform/auth';
import { connectNatsIfConfigured, EmbeddedTransport, EventConsumer, sqlCursorStore, startOutboxRelay, subscriptionOf } from '@platform/events';
import { createOutgoingCalls } from '@platform/outgoing-calls';
import { configOrExit, runService } from '@platform/service-kit';
import { createUsersApp } from './app';
import { usersDatabase } from './database';
import { redisRevocationPublisher } from './credentials/revocations';
import { loadUsersConfig } from './config';

const config = configOrExit('users-service', loadUsersConfig);

runService({
  name: 'users-service',
  config,
  database: usersDatabase(path.join(__dirname, 'migrations')),
  async build({ logger, health, metrics, database }) {
    if (!database) throw new Error('runService opens the database before build');
    // With REDIS_URL, password changes and deletions reach every gateway within a second (libs/auth revocations.ts).
    const revocations = config.REDIS_URL ? redisRevocationPublisher(config.REDIS_URL, logger) : undefined;
    // Committed outbox rows to the transport: NATS JetStream when NATS_URL is set; otherwise the
    // outbox is the log, read by consumers at /internal/events. Webhooks consume every service's
    // events, this one's own included (read from its own log like any other consumer's).
    const transport =
      (await connectNatsIfConfigured(config, { name: 'users-service', logger })) ??
      new EmbeddedTransport({
        producers: { 'users-service': `http://127.0.0.1:${config.PORT}`, 'orders-service': config.ORDERS_URL, 'catalog-service': config.CATALOG_URL, 'inventory-service': config.INVENTORY_URL },
        // Its reads of other apps' logs are outgoing calls like any other (libs/outgoing-calls).
        calls: createOutgoingCalls({ registry: metrics.registry, serviceToken: serviceTokenSource(config.jwtSecret, 'users-service') }),
        cursors: sqlCursorStore(database.prisma),
        pollMs: config.EVENTS_POLL_MS,
        logger,
      });
    const events = await startOutboxRelay(database, transport, logger, { service: 'users-service', pollMs: config.EVENTS_POLL_MS }, metrics.registry);
    const { app, users, dispatcher, eventHandlers } = await createUsersApp({ config, prisma: database.prisma, databaseKind: database.kind, logger, health, metrics, revocations });
    const consumer = new EventConsumer(database.prisma, transport, logger, { ...subscriptionOf('users-service'), handlers: eventHandlers, handlerTimeoutMs: config.EVENTS_HANDLER_TIMEOUT_MS }, metrics.registry);
    return {
      app,
      resources: [() => consumer.stop(), () => dispatcher.stop(), events.stop, () => transport.close(), async () => revocations?.stop()],
      beforeListen: async () => {
        const outcome = await users.bootstrapAdmin(config.ADMIN_EMAIL, config.ADMIN_PASSWORD);
        logger.info({ email: config.ADMIN_EMAIL, outcome }, 'admin account');
        await consumer.start();
        dispatcher.start(config.WEBHOOK_DISPATCH_MS);
      },
    };
  },
});
