// Keyset against offset paging over 1,000,000 orders on PostgreSQL: latency of page 1 and page
// 10,000 (size 100) for each, side by side, through orders-service's real HTTP API.
// Usage: node tools/ts-run.mjs tools/bench/orders-paging.ts [orders, default 1000000] [repeats, default 15]
import { issueAccessToken } from '@platform/auth';
import { encodeCursor, toPageRequest } from '@platform/paging';
import { Client } from 'pg';
import { createDatabases, port, startStack, table } from './stack.mjs';
import { medianAndP95 } from './latency';

const SIZE = 100;
const FAR_PAGE = 10_000;

async function timeRequest(url: string, token: string): Promise<number> {
  const started = process.hrtime.bigint();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { items?: unknown[] };
  if (res.status !== 200 || body.items?.length !== SIZE) throw new Error(`${url}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 1_000_000);
  const repeats = Number(process.argv[3] ?? 15);
  const databases = await createDatabases(['orders']);
  const stack = await startStack({ apps: ['orders-service'], databases: databases.urls, env: { CURSOR_SECRET: 'bench-cursor-secret-0123' } });
  const db = new Client({ connectionString: databases.urls.orders });
  await db.connect();
  try {
    const loadStarted = Date.now();
    // 1M orders over 10,000 users, one item and a shipment each, created one second apart.
    await db.query(`INSERT INTO orders (id, user_id, status, amount, currency, reservation_key, created_at, updated_at)
      SELECT gen_random_uuid(), ('01a20000-0000-7000-8000-' || lpad((g % 10000)::text, 12, '0'))::uuid, 'PENDING', ((g::bigint * 7919) % 1000000)::int, 'KRW', 'bench-' || g,
             timestamptz '2026-01-01' + g * interval '1 second', now()
      FROM generate_series(1, $1::int) AS g`, [total]);
    await db.query(`INSERT INTO order_items (id, order_id, product_id, sku, product_name, quantity, unit_price, amount)
      SELECT gen_random_uuid(), id, '01a20000-0000-7000-8000-000000000999', 'KB-MECH-001', 'Mechanical Keyboard', 1, amount, amount FROM orders`);
    await db.query('INSERT INTO shipments (order_id, updated_at) SELECT id, now() FROM orders');
    await db.query('ANALYZE');
    const loadSeconds = (Date.now() - loadStarted) / 1000;

    const { accessToken } = await issueAccessToken(process.env.BENCH_JWT_SECRET ?? stack.jwtSecret, { userId: '01a20000-0000-7000-8000-00000000a000', role: 'admin' });
    // The cursor orders-service would hand out at the end of page 9,999, signed the same way.
    const sort = { field: 'createdAt', direction: 'desc' } as const;
    const scope = toPageRequest({}, { list: 'orders', sort, filters: {}, secret: 'bench-cursor-secret-0123' }).scope;
    const { rows: [before] } = await db.query('SELECT created_at, id FROM orders ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1', [(FAR_PAGE - 1) * SIZE - 1]);
    const cursor = encodeCursor('bench-cursor-secret-0123', scope, [before.created_at, before.id]);

    const base = `http://127.0.0.1:${port(3002)}/orders`;
    const cases: [string, string][] = [
      ['keyset page 1', `${base}?size=${SIZE}`],
      [`keyset page ${FAR_PAGE}`, `${base}?size=${SIZE}&cursor=${encodeURIComponent(cursor)}`],
      ['offset page 1', `${base}?page=1&size=${SIZE}`],
      [`offset page ${FAR_PAGE}`, `${base}?page=${FAR_PAGE}&size=${SIZE}`],
    ];
    const results: Record<string, { median: number; p95: number }> = {};
    for (const [, url] of cases) await timeRequest(url, accessToken); // warm caches and plans
    for (const [name, url] of cases) {
      const samples = [];
      for (let i = 0; i < repeats; i++) samples.push(await timeRequest(url, accessToken));
      results[name] = medianAndP95(samples);
    }
    console.log(`\n${total.toLocaleString('en')} orders loaded in ${loadSeconds.toFixed(0)} s; ${repeats} requests per case, size ${SIZE}, ${new Date().toISOString()}\n`);
    console.log(table(Object.entries(results).map(([name, { median, p95 }]) => ({ case: name, 'median ms': median.toFixed(1), 'p95 ms': p95.toFixed(1) }))));
    const keysetRatio = results[`keyset page ${FAR_PAGE}`].median / results['keyset page 1'].median;
    const offsetRatio = results[`offset page ${FAR_PAGE}`].median / results['offset page 1'].median;
    console.log(`\nkeyset page ${FAR_PAGE} / page 1: ${keysetRatio.toFixed(2)}x (target <= 1.5x); offset page ${FAR_PAGE} / page 1: ${offsetRatio.toFixed(1)}x`);
  } finally {
    await db.end();
    await stack.stop();
    await databases.drop();
  }
}
