// One function gives a service its Prisma client: PostgreSQL through @prisma/adapter-pg when
// DATABASE_URL is set, otherwise an embedded PGlite under DATA_DIR/<service>.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { Client, Pool } from 'pg';
import type { Registry } from 'prom-client';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { applyMigrations, type MigrationResult, type SqlRunner } from './migrate';
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

/** Migrates a PostgreSQL database over one plain connection (also the `migrate` command). */
export async function migratePostgres(databaseUrl: string, migrationsDir: string): Promise<MigrationResult> {
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
  const pglite = await PGlite.create(dataPath, PGLITE_OPTIONS);
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
