import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { applyMigrations, type SqlRunner } from './migrate';
import { createTestPGlite } from './testing';

async function migrationsDir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'migrations-'));
  for (const [name, sql] of Object.entries(files)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

function runner(db: PGlite): SqlRunner {
  return { query: (sql, params) => db.query(sql, params) as never, exec: (sql) => db.exec(sql) };
}

describe('applyMigrations', () => {
  let db: PGlite;
  beforeEach(async () => {
    db = await createTestPGlite();
  });
  afterEach(() => db.close());

  it('applies pending migrations in order once and records them like prisma migrate deploy', async () => {
    const dir = await migrationsDir({
      '20260101000000_init': 'CREATE TABLE things (id int primary key);',
      '20260102000000_more': 'ALTER TABLE things ADD COLUMN name text;',
    });
    expect(await applyMigrations(runner(db), dir)).toEqual({ applied: ['20260101000000_init', '20260102000000_more'], alreadyApplied: 0 });
    expect(await applyMigrations(runner(db), dir)).toEqual({ applied: [], alreadyApplied: 2 });
    const { rows } = await db.query<{ migration_name: string; checksum: string; applied_steps_count: number }>(
      'SELECT migration_name, checksum, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name',
    );
    expect(rows.map((row) => row.migration_name)).toEqual(['20260101000000_init', '20260102000000_more']);
    expect(rows[0].checksum).toMatch(/^[\da-f]{64}$/);
    await db.query("INSERT INTO things (id, name) VALUES (1, 'a')");
  });

  it('rolls back a failing migration and keeps earlier ones', async () => {
    const dir = await migrationsDir({
      '20260101000000_init': 'CREATE TABLE things (id int primary key);',
      '20260102000000_broken': 'CREATE TABLE half (id int); SELECT no_such_function();',
    });
    await expect(applyMigrations(runner(db), dir)).rejects.toThrow(/20260102000000_broken failed/);
    const { rows } = await db.query("SELECT to_regclass('half') AS half, to_regclass('things') AS things");
    expect(rows[0]).toEqual({ half: null, things: 'things' });
  });

  it('refuses to run when an applied migration was edited', async () => {
    const dir = await migrationsDir({ '20260101000000_init': 'CREATE TABLE things (id int primary key);' });
    await applyMigrations(runner(db), dir);
    await writeFile(path.join(dir, '20260101000000_init', 'migration.sql'), 'CREATE TABLE things (id bigint primary key);');
    await expect(applyMigrations(runner(db), dir)).rejects.toThrow(/edited after it was applied/);
  });
});
