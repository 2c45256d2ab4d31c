// orders-service process: see runService for the life cycle; the sweeper (background worker) runs beside.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceTokenSource } from '@platform/auth';
import { createInventoryClient } from '@platform/inventory-contract';
import { createOutgoingCalls } from '@platform/outgoing-calls';
import { connectNatsIfConfigured, EmbeddedTransport, EventConsumer, sqlCursorStore, startOutboxRelay, subscriptionOf } from '@platform/events';
import { configOrExit, runService } from '@platform/service-kit';
import { createOrdersApp } from './app';
import { ordersDatabase } from './database';
import { createCatalogClient } from './catalog/client';
import { loadOrdersConfig } from './config';

const config = configOrExit('orders-service', loadOrdersConfig);

runService({
  name: 'orders-service',
  config,
  database: ordersDatabase(path.join(__dirname, 'migrations')),
  async build({ logger, health, metrics, database }) {
    if (!database) throw new Error('runService opens the database before build');
    const serviceToken = serviceTokenSource(config.jwtSecret, 'orders-service');
    // Every call to another app (catalog, inventory, users' event log) is built here.
    const calls = createOutgoingCalls({ registry: metrics.registry, serviceToken });
    // Committed outbox rows to the transport (the embedded one serves them at /internal/events).
    // NATS JetStream when NATS_URL is set; otherwise the producers' logs over HTTP (no extra process).
    const transport =
      (await connectNatsIfConfigured(config, { name: 'orders-service', logger })) ??
      new EmbeddedTransport({
        producers: { 'users-service': config.USERS_URL },
        calls,
        cursors: sqlCursorStore(database.prisma),
        pollMs: config.EVENTS_POLL_MS,
        logger,
      });
    const events = await startOutboxRelay(database, transport, logger, { service: 'orders-service', pollMs: config.EVENTS_POLL_MS }, metrics.registry);
    // Inventory serves only callers it allow-lists, each call with a service token.
    const inventory = createInventoryClient(config.INVENTORY_ADDRESS, { calls });
    const { app, sweeper, eventHandlers } = await createOrdersApp({
      config,
      prisma: database.prisma, databaseKind: database.kind,
      catalog: createCatalogClient(calls.http('catalog', config.CATALOG_URL)),
      inventory,
      logger,
      health,
      metrics,
    });
    const consumer = new EventConsumer(database.prisma, transport, logger, { ...subscriptionOf('orders-service'), handlers: eventHandlers, handlerTimeoutMs: config.EVENTS_HANDLER_TIMEOUT_MS }, metrics.registry);
    await consumer.start();
    return {
      app,
      beforeListen: async () => sweeper.start(config.ORDERS_SWEEP_MS),
      resources: [() => consumer.stop(), events.stop, () => transport.close(), () => sweeper.stop(), async () => inventory.close()],
    };
  },
});
