// @platform/db/testing, an entry point of its own so that no app's bundle carries it: a fresh
// PostgreSQL database per call when TEST_DATABASE_URL is set (CI runs on real PostgreSQL),
// otherwise an in-memory PGlite. Both get the service's real migrations.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { type Database, openDatabase, type DatabaseOptions, type PrismaLike } from './database';

/** For a test that opens PGlite itself over a service's migrations: the extensions they create. */
export { EMBEDDED_EXTENSIONS } from './database';

export async function openTestDatabase<P extends PrismaLike>(options: Pick<DatabaseOptions<P>, 'service' | 'migrationsDir' | 'createClient' | 'poolSize'>): Promise<Database<P>> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return openDatabase({ ...options, dataDir: 'memory://', migrate: true });
  const name = `test_${options.service.replace(/\W/g, '_')}_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ ...options, databaseUrl: url.toString(), dataDir: 'memory://', migrate: true });
  return {
    ...database,
    close: async () => {
      await database.close();
      const cleanup = new Client({ connectionString: serverUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await cleanup.end();
    },
  };
}
