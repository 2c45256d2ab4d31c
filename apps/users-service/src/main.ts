// users-service process: see runService for the life cycle.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import { serviceDatabase } from '@platform/db';
import { configOrExit, runService } from '@platform/service-kit';
import { createUsersApp } from './app';
import { loadUsersConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

const config = configOrExit('users-service', loadUsersConfig);

runService({
  name: 'users-service',
  config,
  database: serviceDatabase({ migrationsDir: path.join(__dirname, 'migrations'), createClient: (adapter) => new PrismaClient({ adapter }) }),
  async build({ logger, health, metrics, database }) {
    const { app, users } = await createUsersApp({ config, prisma: database!.prisma, logger, health, metrics });
    return {
      app,
      beforeListen: async () => {
        const outcome = await users.bootstrapAdmin(config.ADMIN_EMAIL, config.ADMIN_PASSWORD);
        logger.info({ email: config.ADMIN_EMAIL, outcome }, 'admin account');
      },
    };
  },
});
