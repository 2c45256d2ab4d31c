// users-service process: see runService for the life cycle.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceTokenSource } from '@platform/auth';
import { applyEventsStream, connectNatsIfConfigured, EmbeddedTransport, eventsConfigFrom, EventConsumer, sqlCursorStore, startOutboxRelay, subscriptionOf } from '@platform/events';
import { createOutgoingCalls } from '@platform/outgoing-calls';
import { configOrExit, createLogger, runService } from '@platform/service-kit';
import { createUsersApp } from './app';
import { usersDatabase } from './database';
import { redisRevocationPublisher } from './credentials/revocations';
import { loadUsersConfig } from './config';

// `main.js events-stream`: prod's events-stream Job (deploy/k8s/overlays/prod/events-stream.yaml)
// creates the EVENTS stream or brings it to its NATS_STREAM_* settings as the broker's
// stream-admin user, which the services' own users may not, then exits (1: the Job tries again).
// It reads the events settings only, so the Job holds none of this service's secrets.
if (process.argv[2] === 'events-stream') {
  const logger = createLogger('events-stream');
  Promise.resolve()
    .then(() => applyEventsStream(eventsConfigFrom(process.env), logger))
    .then(
      () => process.exit(0),
      (error: unknown) => {
        logger.fatal({ err: error }, 'the EVENTS stream was not applied');
        process.exit(1);
      },
    );
} else {
  startUsersService();
}

function startUsersService(): void {
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
}
