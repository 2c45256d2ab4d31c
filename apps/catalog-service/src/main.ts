// catalog-service process: see runService for the life cycle.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceTokenSource } from '@platform/auth';
import { connectNatsIfConfigured, EmbeddedTransport, EventConsumer, sqlCursorStore, startOutboxRelay, subscriptionOf } from '@platform/events';
import { createOutgoingCalls } from '@platform/outgoing-calls';
import { configOrExit, runService, seedsDemoData } from '@platform/service-kit';
import { createCatalogApp } from './app';
import { catalogDatabase } from './database';
import { loadCatalogConfig } from './config';

const config = configOrExit('catalog-service', loadCatalogConfig);

runService({
  name: 'catalog-service',
  config,
  database: catalogDatabase(path.join(__dirname, 'migrations')),
  async build({ logger, health, metrics, database }) {
    if (!database) throw new Error('runService opens the database before build');
    // Committed outbox rows to the transport (the embedded one serves them at /internal/events).
    // NATS JetStream when NATS_URL is set; otherwise the producers' logs over HTTP (no extra process).
    const transport =
      (await connectNatsIfConfigured(config, { name: 'catalog-service', logger })) ??
      new EmbeddedTransport({
        producers: { 'users-service': config.USERS_URL },
        // Its reads of other apps' logs are outgoing calls like any other (libs/outgoing-calls).
        calls: createOutgoingCalls({ registry: metrics.registry, serviceToken: serviceTokenSource(config.jwtSecret, 'catalog-service') }),
        cursors: sqlCursorStore(database.prisma),
        pollMs: config.EVENTS_POLL_MS,
        logger,
      });
    const events = await startOutboxRelay(database, transport, logger, { service: 'catalog-service', pollMs: config.EVENTS_POLL_MS }, metrics.registry);
    const { app, products, eventHandlers } = await createCatalogApp({ config, prisma: database.prisma, databaseKind: database.kind, logger, health, metrics });
    const consumer = new EventConsumer(database.prisma, transport, logger, { ...subscriptionOf('catalog-service'), handlers: eventHandlers, handlerTimeoutMs: config.EVENTS_HANDLER_TIMEOUT_MS }, metrics.registry);
    await consumer.start();
    return {
      app,
      resources: [() => consumer.stop(), events.stop, () => transport.close()],
      beforeListen: async () => {
        const seeded = seedsDemoData(config) ? await products.seedDemoCatalog() : 0;
        if (seeded) logger.info({ products: seeded }, 'demo catalog seeded into the empty database');
      },
    };
  },
});
