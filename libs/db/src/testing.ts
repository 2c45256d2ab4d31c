// @platform/db/testing, an entry point of its own so that no app's bundle carries it: a fresh
// PostgreSQL database per call when TEST_DATABASE_URL is set (CI runs on real PostgreSQL),
// otherwise an in-memory PGlite (from a copy of a fresh data directory). Both get the service's
// real migrations.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { Client } from 'pg';
import { type Database, openDatabase, type DatabaseOptions, type PrismaLike } from './database';

/** For a test that opens PGlite itself over a service's migrations: the extensions they create. */
export { EMBEDDED_EXTENSIONS } from './database';

/** The installed PGlite's version: a fresh data directory is kept per version. */
function pgliteVersion(): string {
  for (let dir = path.dirname(require.resolve('@electric-sql/pglite')); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (name === '@electric-sql/pglite' && version) return version;
    }
  }
  throw new Error('@electric-sql/pglite: no package.json above its entry point');
}

/**
 * A data directory fresh from PGlite's initdb, as a tar (PGlite's dumpDataDir). initdb runs in
 * WebAssembly: 5 to 9 s on a busy 2-core machine, where loading its copy takes about 1 s (it is
 * how PGlite itself finishes a create, and how it clones). Made once per PGlite version under the
 * OS temp dir, written aside and renamed into place, so a test never reads half of one.
 */
async function freshDataDir(): Promise<Blob> {
  const file = path.join(tmpdir(), `pglite-fresh-${pgliteVersion()}.tar`);
  if (!existsSync(file)) {
    const fresh = await PGlite.create();
    try {
      const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
      writeFileSync(aside, Buffer.from(await (await fresh.dumpDataDir('none')).arrayBuffer()));
      renameSync(aside, file);
    } finally {
      await fresh.close();
    }
  }
  return new Blob([readFileSync(file)]);
}

/** A new in-memory PGlite, as `PGlite.create(options)` makes one, started from a copy of a fresh data directory rather than its own initdb. */
export async function createTestPGlite(options: PGliteOptions = {}): Promise<PGlite> {
  return PGlite.create({ ...options, loadDataDir: await freshDataDir() });
}

export async function openTestDatabase<P extends PrismaLike>(options: Pick<DatabaseOptions<P>, 'service' | 'migrationsDir' | 'createClient' | 'poolSize'>): Promise<Database<P>> {
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!serverUrl) return openDatabase({ ...options, dataDir: 'memory://', migrate: true, initialDataDir: await freshDataDir() });
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
