// A service's database as runService opens it: the app names its migrations and Prisma client,
// this library decides how to open and migrate them. runService (service-kit) only sees the
// result, so an app without a database (the gateway) never loads Prisma, pg or PGlite.
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import type { Registry } from 'prom-client';
import { type Database, migratePostgres, openDatabase, type PrismaLike } from './database';
import type { MigrationResult } from './migrate';

export interface ServiceDatabaseSettings {
  service: string;
  /** Unset: the embedded database under dataDir. */
  databaseUrl?: string;
  dataDir: string;
  registry?: Registry;
}

export interface ServiceDatabase<P> {
  open(settings: ServiceDatabaseSettings): Promise<Database<P>>;
  /** `main.js migrate`: the pending migrations applied to a PostgreSQL database. */
  migrate(databaseUrl: string): Promise<MigrationResult>;
}

export function serviceDatabase<P extends PrismaLike>(definition: { migrationsDir: string; createClient: (adapter: SqlDriverAdapterFactory) => P }): ServiceDatabase<P> {
  return {
    open: (settings) =>
      openDatabase({
        ...settings,
        ...definition,
        // The embedded database is this process's own; PostgreSQL is migrated by the Job.
        migrate: !settings.databaseUrl,
      }),
    migrate: (databaseUrl) => migratePostgres(databaseUrl, definition.migrationsDir),
  };
}
