// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- a declaration for a package subpath that node10 resolution cannot see; an import would be kept at run time
/// <reference path="./pglite-contrib.d.ts" />
// One function gives a service its Prisma client: PostgreSQL through @prisma/adapter-pg when
// DATABASE_URL is set, otherwise an embedded PGlite under DATA_DIR/<service>.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { Client, Pool } from 'pg';
import type { Registry } from 'prom-client';
import { instrumentedOnlyWhenRecording } from '@platform/tracing';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { applyMigrations, type MigrationResult, missingMigrations, type SqlRunner } from './migrate';
import { observePool } from './pool-metrics';

export interface PrismaLike {
  $queryRawUnsafe(sql: string): Promise<unknown>;
  $disconnect(): Promise<void>;
}

export interface DatabaseOptions<P> {
  service: string;
  /** Unset: embedded PGlite. */
  databaseUrl?: string;
  /** Root for embedded data; `memory://` keeps it in memory (tests). */
  dataDir: string;
  /** In memory only: a fresh data directory (PGlite's dumpDataDir) to start from instead of running initdb (tests, @platform/db/testing). */
  initialDataDir?: Blob;
  migrationsDir: string;
  createClient: (adapter: SqlDriverAdapterFactory) => P;
  /** Run pending migrations first (embedded default, tests); the Kubernetes Job does it otherwise. */
  migrate?: boolean;
  poolSize?: number;
  /** Where the pool's query latency and connection counts are reported (PostgreSQL only). */
  registry?: Registry;
}

export interface NotificationHandlers {
  /** The payload of each NOTIFY on the channel, in commit order. */
  onNotification(payload: string): void;
  /** The listening connection was lost and is back: notifications sent meanwhile were missed. */
  onReconnect?(): void;
}

export interface Database<P> {
  prisma: P;
  kind: 'postgresql' | 'pglite';
  migrations?: MigrationResult;
  ping(): Promise<void>;
  /**
   * LISTENs on `channel` over a connection of its own (PostgreSQL; the embedded database's one
   * connection for PGlite). Resolves once listening; the function it returns stops.
   */
  listen(channel: string, handlers: NotificationHandlers): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * The embedded database holds a developer's data: PostgreSQL's default 128 MB of shared buffers
 * would be most of each service's memory, for nothing.
 */
const PGLITE_OPTIONS = { postgresqlconf: ['shared_buffers=16MB'] };

/**
 * Runs initdb for a new embedded database in a child process, which exits when it is done:
 * initdb grows PGlite's WebAssembly memory to about 700 MB, and a process never gets that back,
 * while opening the finished directory takes about 170 MB.
 */
async function createEmbeddedDatabase(dataPath: string): Promise<void> {
  const pglite = require.resolve('@electric-sql/pglite');
  const script = `require(${JSON.stringify(pglite)}).PGlite.create(${JSON.stringify(dataPath)}, ${JSON.stringify(PGLITE_OPTIONS)}).then((db) => db.close())`;
  await promisify(execFile)(process.execPath, [BASELINE_WASM_COMPILER_ONLY, '-e', script]);
}

/**
 * PGlite is PostgreSQL compiled to 9 MB of WebAssembly. V8 first compiles it with its baseline
 * compiler (Liftoff), then recompiles the hot functions with its optimising one, and that tier
 * keeps about 55 MiB resident per process for queries some 15 % faster (0.41 against 0.47 ms a
 * pair of small queries). For a developer's database in each of four processes that is the wrong
 * trade, so an embedded database is compiled with the baseline compiler only. The flag touches
 * WebAssembly alone (the only other module is Prisma's query compiler, whose plans are cached),
 * and it is set only when a service opens PGlite: on PostgreSQL nothing changes.
 */
const BASELINE_WASM_COMPILER_ONLY = '--liftoff-only';

/**
 * The extensions a service's migrations may create: PGlite ships each as a bundle that must be
 * loaded when the database opens (PostgreSQL has them installed). pg_trgm backs the trigram
 * indexes of keyword searches (`q`).
 */
export const EMBEDDED_EXTENSIONS = { pg_trgm };

const RELISTEN_DELAY_MS = 1_000;

/** LISTEN on a dedicated connection, opened again (after a pause) whenever it is lost. */
async function listenPostgres(databaseUrl: string, channel: string, handlers: NotificationHandlers): Promise<() => Promise<void>> {
  let stopped = false;
  let client: Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const open = async (): Promise<void> => {
    const connection = new Client({ connectionString: databaseUrl });
    connection.on('notification', (message) => {
      if (message.channel === channel && message.payload !== undefined) handlers.onNotification(message.payload);
    });
    const lost = () => {
      if (stopped || client !== connection) return;
      client = undefined;
      connection.removeAllListeners('notification');
      void connection.end().catch(() => undefined);
      retry = setTimeout(reopen, RELISTEN_DELAY_MS);
    };
    connection.on('error', lost);
    connection.on('end', lost);
    await connection.connect();
    await connection.query(`LISTEN "${channel.replaceAll('"', '""')}"`);
    client = connection;
  };
  const reopen = () => {
    open().then(
      () => handlers.onReconnect?.(),
      () => {
        if (!stopped) retry = setTimeout(reopen, RELISTEN_DELAY_MS);
      },
    );
  };
  await open();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}

function pgliteRunner(db: PGlite): SqlRunner {
  return { query: (sql, params) => db.query(sql, params) as Promise<{ rows: Record<string, unknown>[] }>, exec: (sql) => db.exec(sql) };
}

const UNKNOWN_DATABASE = '3D000';
const DUPLICATE_DATABASE = '42P04';

/**
 * Creates the database `databaseUrl` names when its server does not have it yet, so that a
 * fresh PostgreSQL server needs no hand step. Connects to the server's `postgres` database for
 * that; two replicas racing to create it both succeed.
 */
async function createDatabaseIfMissing(databaseUrl: string): Promise<boolean> {
  const probe = new Client({ connectionString: databaseUrl });
  try {
    await probe.connect();
    return false;
  } catch (error) {
    if ((error as { code?: string }).code !== UNKNOWN_DATABASE) throw error;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code !== DUPLICATE_DATABASE) throw error;
    return false;
  } finally {
    await admin.end();
  }
}

/**
 * Throws, naming what is missing, when the database lacks migrations this build ships: a
 * service must not serve on a schema older than its code (docs/operations.md, "Rollouts").
 */
async function assertSchemaCurrent(pool: Pool, service: string, migrationsDir: string): Promise<void> {
  const missing = await missingMigrations({ query: (sql, params) => pool.query(sql, params), exec: (sql) => pool.query(sql) }, migrationsDir);
  if (missing.length === 0) return;
  throw new Error(
    `${service}: the database schema is older than this build: ${missing.length} migration(s) not applied (${missing.join(', ')}). ` +
      'Run "node main.js migrate" with this DATABASE_URL first (on Kubernetes the migrate init container does); refusing to start.',
  );
}

/** Migrates a PostgreSQL database over one plain connection (also the `migrate` command), creating it first if the server has none by its name. */
export async function migratePostgres(databaseUrl: string, migrationsDir: string): Promise<MigrationResult> {
  await createDatabaseIfMissing(databaseUrl);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await applyMigrations({ query: (sql, params) => client.query(sql, params), exec: (sql) => client.query(sql) }, migrationsDir);
  } finally {
    await client.end();
  }
}

export async function openDatabase<P extends PrismaLike>(options: DatabaseOptions<P>): Promise<Database<P>> {
  if (options.databaseUrl) {
    const migrations = options.migrate ? await migratePostgres(options.databaseUrl, options.migrationsDir) : undefined;
    const pool = new Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 10 });
    // A request the tracing sampler left out sends its queries past the pg instrumentation.
    instrumentedOnlyWhenRecording(Client.prototype, 'query');
    instrumentedOnlyWhenRecording(pool, 'connect');
    try {
      if (!options.migrate) await assertSchemaCurrent(pool, options.service, options.migrationsDir);
    } catch (error) {
      await pool.end();
      throw error;
    }
    if (options.registry) observePool(pool, options.registry);
    // The adapter leaves a pool it was given open: $disconnect ends it (disposeExternalPool).
    const prisma = options.createClient(new PrismaPg(pool, { disposeExternalPool: true }));
    return {
      prisma,
      kind: 'postgresql',
      migrations,
      ping: async () => {
        await prisma.$queryRawUnsafe('SELECT 1');
      },
      listen: (channel, handlers) => listenPostgres(options.databaseUrl!, channel, handlers),
      close: () => prisma.$disconnect(),
    };
  }
  v8.setFlagsFromString(BASELINE_WASM_COMPILER_ONLY);
  const inMemory = options.dataDir.startsWith('memory://');
  const dataPath = inMemory ? undefined : path.join(options.dataDir, options.service);
  if (dataPath) {
    await mkdir(dataPath, { recursive: true });
    if (!existsSync(path.join(dataPath, 'PG_VERSION'))) await createEmbeddedDatabase(dataPath);
  }
  const pglite = await PGlite.create(dataPath, { ...PGLITE_OPTIONS, extensions: EMBEDDED_EXTENSIONS, ...(inMemory && options.initialDataDir ? { loadDataDir: options.initialDataDir } : {}) });
  // The embedded database has no separate migration step: it is this process's own.
  const migrations = await applyMigrations(pgliteRunner(pglite), options.migrationsDir);
  const prisma = options.createClient(new PrismaPGlite(pglite) as unknown as SqlDriverAdapterFactory);
  return {
    prisma,
    kind: 'pglite',
    migrations,
    ping: async () => {
      await pglite.query('SELECT 1');
    },
    listen: async (channel, handlers) => {
      const unsubscribe = await pglite.listen(channel, handlers.onNotification);
      return () => unsubscribe();
    },
    close: async () => {
      await prisma.$disconnect();
      await pglite.close();
    },
  };
}
