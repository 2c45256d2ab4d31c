// inventory-service process: see runService for the life cycle; gRPC listens beside HTTP.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { TokenVerifier } from '@platform/auth';
import { serviceDatabase } from '@platform/db';
import { configOrExit, runService } from '@platform/service-kit';
import { createInventoryApp } from './app';
import { loadInventoryConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

const config = configOrExit('inventory-service', loadInventoryConfig);

runService({
  name: 'inventory-service',
  config,
  database: serviceDatabase({ migrationsDir: path.join(__dirname, 'migrations'), createClient: (adapter) => new PrismaClient({ adapter }) }),
  async build({ logger, health, metrics, database }) {
    const callers = { verifier: new TokenVerifier(config.jwtVerifySecrets, { audience: 'internal' }), allowed: config.INVENTORY_CALLERS };
    const verifier = new TokenVerifier(config.jwtVerifySecrets);
    const { app, stock, grpc } = createInventoryApp({ prisma: database!.prisma, notifications: database!, logger, health, metrics, callers, verifier, cursorSecret: config.cursorSecret, introspection: config.NODE_ENV !== 'production' });
    return {
      app,
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
