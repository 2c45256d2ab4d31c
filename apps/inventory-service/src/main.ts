// inventory-service process: see runService for the life cycle; gRPC listens beside HTTP.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceTokenSource, TokenVerifier } from '@platform/auth';
import { serviceDatabase } from '@platform/db';
import { connectNatsIfConfigured, EmbeddedTransport, startOutboxRelay } from '@platform/events';
import { configOrExit, runService } from '@platform/service-kit';
import { createInventoryApp } from './app';
import { loadInventoryConfig, streamLimitsOf } from './config';
import { PrismaClient } from './generated/prisma/client';

const config = configOrExit('inventory-service', loadInventoryConfig);

runService({
  name: 'inventory-service',
  config,
  database: serviceDatabase({ migrationsDir: path.join(__dirname, 'migrations'), createClient: (adapter) => new PrismaClient({ adapter }) }),
  async build({ logger, health, metrics, database }) {
    if (!database) throw new Error('runService opens the database before build');
    // Committed outbox rows to the transport (the embedded one serves them at /internal/events).
    // NATS JetStream when NATS_URL is set; otherwise the outbox is the log, read by consumers at /internal/events.
    const transport = (await connectNatsIfConfigured(config.NATS_URL, { name: 'inventory-service', logger, replicas: config.NATS_STREAM_REPLICAS })) ?? new EmbeddedTransport({ producers: {}, serviceToken: serviceTokenSource(config.jwtSecret, 'inventory-service'), logger });
    const events = await startOutboxRelay(database, transport, logger, { service: 'inventory-service', pollMs: config.EVENTS_POLL_MS }, metrics.registry);
    const callers = { verifier: new TokenVerifier(config.jwtVerifySecrets, { audience: 'internal' }), allowed: config.INVENTORY_CALLERS };
    const verifier = new TokenVerifier(config.jwtVerifySecrets);
    const { app, stock, grpc } = createInventoryApp({ prisma: database.prisma, notifications: database, logger, health, metrics, callers, verifier, cursorSecret: config.cursorSecret, introspection: config.NODE_ENV !== 'production', streamLimits: streamLimitsOf(config) });
    return {
      app,
      resources: [events.stop, () => transport.close()],
      beforeListen: async () => {
        const seeded = await stock.seedDemoStock();
        if (seeded) logger.info({ skus: seeded }, 'demo stock seeded into the empty database');
        const port = await grpc.listen(config.GRPC_PORT);
        logger.info({ port }, 'gRPC listening');
      },
      listeners: [grpc.stoppable],
    };
  },
});
