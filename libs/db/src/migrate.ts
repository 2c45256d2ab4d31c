// Runtime migration runner: applies each committed `migration.sql` in order, each in its own
// transaction, under Prisma's advisory lock, recording rows in Prisma's `_prisma_migrations`
// table exactly as `prisma migrate deploy` does, so either tool can take over from the other.
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** The two statements the runner needs, over `pg` or PGlite alike. */
export interface SqlRunner {
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  exec(sql: string): Promise<unknown>;
}

const PRISMA_ADVISORY_LOCK = 72707369;

const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

export interface MigrationResult {
  applied: string[];
  alreadyApplied: number;
}

export async function listMigrations(migrationsDir: string): Promise<{ name: string; sql: string; checksum: string }[]> {
  const entries = await readdir(migrationsDir, { withFileTypes: true });
  const names = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(migrationsDir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

export async function applyMigrations(db: SqlRunner, migrationsDir: string): Promise<MigrationResult> {
  const migrations = await listMigrations(migrationsDir);
  await db.query('SELECT pg_advisory_lock($1)', [PRISMA_ADVISORY_LOCK]);
  try {
    await db.exec(CREATE_MIGRATIONS_TABLE);
    const { rows } = await db.query('SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL');
    const done = new Map(rows.map((row) => [row.migration_name as string, row.checksum as string]));
    const applied: string[] = [];
    for (const migration of migrations) {
      const checksum = done.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) throw new Error(`Migration ${migration.name} was edited after it was applied (checksum differs).`);
        continue;
      }
      const id = randomUUID();
      await db.exec('BEGIN');
      try {
        await db.exec(migration.sql);
        await db.query(
          'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), now(), 1)',
          [id, migration.checksum, migration.name],
        );
        await db.exec('COMMIT');
      } catch (error) {
        await db.exec('ROLLBACK');
        throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.name);
    }
    return { applied, alreadyApplied: done.size };
  } finally {
    await db.query('SELECT pg_advisory_unlock($1)', [PRISMA_ADVISORY_LOCK]);
  }
}

/**
 * The migrations this build ships that the database has not finished: a service refuses to
 * start on such a schema. Migrations the database has and the build does not know (a newer
 * release's, during a rollback) are fine, since migrations only ever add to what runs before.
 */
export async function missingMigrations(db: SqlRunner, migrationsDir: string): Promise<string[]> {
  const shipped = await listMigrations(migrationsDir);
  const { rows: [table] } = await db.query(`SELECT to_regclass('"_prisma_migrations"') AS name`);
  if (!table?.name) return shipped.map((migration) => migration.name);
  const { rows } = await db.query('SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL');
  const applied = new Set(rows.map((row) => row.migration_name as string));
  return shipped.map((migration) => migration.name).filter((name) => !applied.has(name));
}
