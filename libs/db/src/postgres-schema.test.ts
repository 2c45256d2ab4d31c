// A service on PostgreSQL: its database is created on a fresh server by the migrate step, and a
// service refuses to start on a schema older than its build. Real PostgreSQL (TEST_DATABASE_URL,
// or a throwaway cluster of the test's own).
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { Client } from 'pg';
import { PostgresCluster } from '@platform/test-kit';
import { migratePostgres, openDatabase, type PrismaLike } from './database';

let cluster: PostgresCluster | undefined;
let serverUrl: string;
const created: string[] = [];

beforeAll(async () => {
  serverUrl = process.env.TEST_DATABASE_URL ?? '';
  if (!serverUrl) {
    cluster = await PostgresCluster.start();
    serverUrl = cluster.url();
  }
}, 60_000);

afterAll(async () => {
  if (serverUrl) {
    const admin = new Client({ connectionString: serverUrl });
    await admin.connect();
    for (const name of created) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
  await cluster?.remove();
});

/** The URL of a database the server does not have yet. */
function newDatabaseUrl(): string {
  const name = `schema_test_${randomBytes(5).toString('hex')}`;
  created.push(name);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function migrationsDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
  for (const [name, sql] of Object.entries(files)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

const first = { '20260101000000_init': 'CREATE TABLE things (id int PRIMARY KEY);' };
const second = { ...first, '20260102000000_names': 'ALTER TABLE things ADD COLUMN name text;' };

/** Opens as a service on PostgreSQL does (no migration at start), with a client that only closes its pool. */
function openService(databaseUrl: string, dir: string) {
  const createClient = (adapter: SqlDriverAdapterFactory): PrismaLike => ({
    $queryRawUnsafe: async () => [],
    $disconnect: async () => (await adapter.connect()).dispose(),
  });
  return openDatabase({ service: 'things-service', databaseUrl, dataDir: 'memory://', migrationsDir: dir, createClient });
}

it('creates the database on a server that does not have it, then migrates it', async () => {
  const url = newDatabaseUrl();
  expect(await migratePostgres(url, await migrationsDir(first))).toEqual({ applied: ['20260101000000_init'], alreadyApplied: 0 });
  const client = new Client({ connectionString: url });
  await client.connect();
  const { rows } = await client.query('SELECT count(*)::int AS n FROM things');
  await client.end();
  expect(rows).toEqual([{ n: 0 }]);
  // Again, as on every rollout: nothing to do.
  expect(await migratePostgres(url, await migrationsDir(first))).toEqual({ applied: [], alreadyApplied: 1 });
});

it('refuses to start on a schema older than the build, naming the missing migrations, and starts once migrated', async () => {
  const url = newDatabaseUrl();
  await migratePostgres(url, await migrationsDir(first));
  const newer = await migrationsDir(second);
  await expect(openService(url, newer)).rejects.toThrow(
    'things-service: the database schema is older than this build: 1 migration(s) not applied (20260102000000_names). Run "node main.js migrate"',
  );
  await migratePostgres(url, newer);
  const database = await openService(url, newer);
  expect(database.kind).toBe('postgresql');
  await database.close();
  // A rollback: the previous build on the newer schema starts.
  const previous = await openService(url, await migrationsDir(first));
  await previous.close();
});

it('refuses to start on a database that was never migrated', async () => {
  const url = newDatabaseUrl();
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${new URL(url).pathname.slice(1)}"`);
  await admin.end();
  await expect(openService(url, await migrationsDir(first))).rejects.toThrow('1 migration(s) not applied (20260101000000_init)');
});
