// orders-service process: see runService for the life cycle; the sweeper (background worker) runs beside.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceTokenSource } from '@platform/auth';
import { createInventoryClient } from '@platform/inventory-contract';
import { serviceDatabase } from '@platform/db';
import { configOrExit, runService } from '@platform/service-kit';
import { createOrdersApp } from './app';
import { createCatalogClient } from './catalog/client';
import { loadOrdersConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

const config = configOrExit('orders-service', loadOrdersConfig);

runService({
  name: 'orders-service',
  config,
  database: serviceDatabase({ migrationsDir: path.join(__dirname, 'migrations'), createClient: (adapter) => new PrismaClient({ adapter }) }),
  async build({ logger, health, metrics, database }) {
    // Inventory serves only callers it allow-lists, each call with a service token.
    const inventory = createInventoryClient(config.INVENTORY_ADDRESS, { serviceToken: serviceTokenSource(config.jwtSecret, 'orders-service'), registry: metrics.registry });
    const { app, sweeper } = await createOrdersApp({
      config,
      prisma: database!.prisma,
      catalog: createCatalogClient(config.CATALOG_URL),
      inventory,
      logger,
      health,
      metrics,
    });
    return {
      app,
      beforeListen: async () => sweeper.start(config.ORDERS_SWEEP_MS),
      resources: [() => sweeper.stop(), async () => inventory.close()],
    };
  },
});
