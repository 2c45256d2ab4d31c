// inventory-service process: see runService for the life cycle; gRPC listens beside HTTP.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceTokenSource, TokenVerifier } from '@platform/auth';
import { connectNatsIfConfigured, EmbeddedTransport, startOutboxRelay } from '@platform/events';
import { configOrExit, runService, seedsDemoData } from '@platform/service-kit';
import { openUsageStore, UsageRecorder } from '@platform/usage';
import { createInventoryApp } from './app';
import { inventoryDatabase } from './database';
import { loadInventoryConfig, streamLimitsOf } from './config';

const config = configOrExit('inventory-service', loadInventoryConfig);

runService({
  name: 'inventory-service',
  config,
  database: inventoryDatabase(path.join(__dirname, 'migrations')),
  async build({ logger, health, metrics, database }) {
    if (!database) throw new Error('runService opens the database before build');
    // Committed outbox rows to the transport (the embedded one serves them at /internal/events).
    // NATS JetStream when NATS_URL is set; otherwise the outbox is the log, read by consumers at /internal/events.
    const transport = (await connectNatsIfConfigured(config, { name: 'inventory-service', logger })) ?? new EmbeddedTransport({ producers: {}, serviceToken: serviceTokenSource(config.jwtSecret, 'inventory-service'), logger });
    const events = await startOutboxRelay(database, transport, logger, { service: 'inventory-service', pollMs: config.EVENTS_POLL_MS }, metrics.registry);
    const callers = { verifier: new TokenVerifier(config.jwtVerifySecrets, { audience: 'internal' }), allowed: config.INVENTORY_CALLERS };
    const verifier = new TokenVerifier(config.jwtVerifySecrets);
    // Each calling service's use of the RPCs, in the store the gateway records into.
    const usage = config.USAGE_RECORDING === 'on' ? new UsageRecorder(openUsageStore({ redisUrl: config.REDIS_URL, dataDir: config.DATA_DIR, keyPrefix: config.USAGE_KEY_PREFIX }), { registry: metrics.registry, onError: (error) => logger.warn({ err: error }, 'usage flush failed; the counts are kept for the next one') }).start() : undefined;
    const { app, stock, grpc } = createInventoryApp({ usage, prisma: database.prisma, databaseKind: database.kind, notifications: database, logger, health, metrics, callers, verifier, cursorSecret: config.cursorSecret, requestTimeoutMs: config.REQUEST_TIMEOUT_MS, introspection: config.NODE_ENV !== 'production', streamLimits: streamLimitsOf(config), deprecations: config.DEPRECATIONS_FILE.entries });
    return {
      app,
      resources: [events.stop, () => transport.close(), async () => usage?.stop().then(() => usage.store.close())],
      beforeListen: async () => {
        const seeded = seedsDemoData(config) ? await stock.seedDemoStock() : 0;
        if (seeded) logger.info({ skus: seeded }, 'demo stock seeded into the empty database');
        const port = await grpc.listen(config.GRPC_PORT, config.LISTEN_HOST);
        logger.info({ port }, 'gRPC listening');
      },
      listeners: [grpc.stoppable],
    };
  },
});
