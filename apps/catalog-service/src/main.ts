// catalog-service process: see runService for the life cycle.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceDatabase } from '@platform/db';
import { configOrExit, runService } from '@platform/service-kit';
import { createCatalogApp } from './app';
import { loadCatalogConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

const config = configOrExit('catalog-service', loadCatalogConfig);

runService({
  name: 'catalog-service',
  config,
  database: serviceDatabase({ migrationsDir: path.join(__dirname, 'migrations'), createClient: (adapter) => new PrismaClient({ adapter }) }),
  async build({ logger, health, metrics, database }) {
    const { app, products } = await createCatalogApp({ config, prisma: database!.prisma, logger, health, metrics });
    return {
      app,
      beforeListen: async () => {
        const seeded = await products.seedDemoCatalog();
        if (seeded) logger.info({ products: seeded }, 'demo catalog seeded into the empty database');
      },
    };
  },
});
