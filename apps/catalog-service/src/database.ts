// The service's database: its generated Prisma client, which runService opens (and, when
// embedded, migrates). main.ts names it; app.ts hands the client to the repositories, the only
// code that queries it (the lint keeps Prisma types out of everything else).
import { serviceDatabase } from '@platform/db';
import { PrismaClient } from './generated/prisma/client';

/** What app.ts passes to the repositories; only they use it. */
export type DatabaseClient = PrismaClient;

/** The database with its migrations in `migrationsDir` (beside main.js in the build). */
export function catalogDatabase(migrationsDir: string) {
  return serviceDatabase({ migrationsDir, createClient: (adapter) => new PrismaClient({ adapter }) });
}
