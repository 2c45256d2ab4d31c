// The pool metrics as Prometheus scrapes them, on a real PostgreSQL (TEST_DATABASE_URL, or a
// throwaway cluster of the test's own).
import { Pool } from 'pg';
import { Registry } from 'prom-client';
import { PostgresCluster } from '@platform/test-kit';
import { observePool } from './pool-metrics';

let cluster: PostgresCluster | undefined;
let pool: Pool;
const registry = new Registry();

beforeAll(async () => {
  let url = process.env.TEST_DATABASE_URL;
  if (!url) {
    cluster = await PostgresCluster.start();
    url = cluster.url();
  }
  pool = new Pool({ connectionString: url, max: 2 });
  observePool(pool, registry);
}, 60_000);

afterAll(async () => {
  await pool?.end();
  await cluster?.remove();
});

const sampleOf = (text: string, pattern: RegExp) => Number(pattern.exec(text)?.[1]);

it('times every query by statement kind, and shows open, idle and waiting connections', async () => {
  await pool.query('SELECT 1');
  await pool.query({ text: 'SELECT $1::int AS n', values: [2] });
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('CREATE TEMP TABLE scratch (n int)');
    await client.query('INSERT INTO scratch VALUES (1)');
    // Two more requests than the pool has connections: they wait.
    const waiting = [pool.query('SELECT pg_sleep(0.05)'), pool.query('SELECT 1')];
    const during = await registry.getSingleMetricAsString('db_pool_connections');
    expect(sampleOf(during, /state="waiting"\} (\d+)/)).toBeGreaterThanOrEqual(1);
    await client.query('COMMIT');
    client.release();
    await Promise.all(waiting);
  } catch (error) {
    client.release();
    throw error;
  }
  const text = await registry.getSingleMetricAsString('db_query_duration_seconds');
  expect(sampleOf(text, /db_query_duration_seconds_count\{statement="SELECT"\} (\d+)/)).toBe(4);
  for (const statement of ['BEGIN', 'INSERT', 'COMMIT', 'OTHER']) expect([statement, sampleOf(text, new RegExp(`_count\\{statement="${statement}"\\} (\\d+)`))]).toEqual([statement, 1]);
  const after = await registry.getSingleMetricAsString('db_pool_connections');
  expect([sampleOf(after, /state="total"\} (\d+)/), sampleOf(after, /state="waiting"\} (\d+)/)]).toEqual([2, 0]);
});
