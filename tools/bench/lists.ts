// Every list shape at production scale, through each service's real HTTP API on PostgreSQL:
// 1,000,000 orders over 10,000 users (items named from 2,500 realistic product names), 100,000
// users and 100,000 products, seeded by SQL into databases of their own (dropped afterwards).
// Prints, per shape, the median and p95 of its first page and the ratio to the plain first page.
// Usage: node tools/ts-run.mjs tools/bench/lists.ts [orders, default 1000000] [repeats, default 9]
// BENCH_PORT_OFFSET moves the services' ports (default that of stack.mjs).
// BENCH_KEEP_DATABASES=<name> keeps the databases (bench_<name>_orders, _users, _catalog) after the
// run and reuses them on the next one with the same name, skipping the seeding (minutes at
// 1,000,000 orders); the services still migrate them. Drop them by hand when done.
// BENCH_SHAPES=<text> measures only the shapes whose list and name contain it (the plain first
// pages, which ratios need, always run); `BENCH_SHAPES=none` seeds and measures only those.
import { issueAccessToken } from '@platform/auth';
import { encodeCursor, toPageRequest } from '@platform/paging';
import { Client } from 'pg';
import { createDatabases, PORT_OFFSET, startStack, table } from './stack.mjs';
import { medianAndP95 } from './latency';

const CURSOR_SECRET = 'bench-cursor-secret-0123';
const USERS = 10_000;
const DIRECTORY_ROWS = 100_000;
const offset = Number(process.env.BENCH_PORT_OFFSET ?? PORT_OFFSET);

const ADJECTIVES = ['Wireless', 'Ergonomic', 'Mechanical', 'Stainless', 'Organic', 'Vintage', 'Portable', 'Compact', 'Deluxe', 'Classic', 'Smart', 'Foldable', 'Waterproof', 'Rechargeable', 'Bamboo', 'Ceramic', 'Leather', 'Cotton', 'Titanium', 'Magnetic', 'Adjustable', 'Insulated', 'Handmade', 'Premium', 'Heavy-Duty', 'Lightweight', 'Cordless', 'Digital', 'Acoustic', 'Ultra-Slim', 'Noise-Cancelling', 'Bluetooth', 'Solar', 'Glass', 'Wooden', 'Copper', 'Merino', 'Linen', 'Carbon', 'Silicone', 'Recycled', 'Non-Stick', 'Cast Iron', 'Velvet', 'Thermal', 'Modular', 'Retro', 'Nordic', 'Electric', 'Quiet'];
const NOUNS = ['Keyboard', 'Mouse', 'Headphones', 'Water Bottle', 'Backpack', 'Desk Lamp', 'Coffee Grinder', 'Frying Pan', 'Running Shoes', 'Yoga Mat', 'Notebook', 'Fountain Pen', 'Phone Case', 'Charger', 'Speaker', 'Monitor Stand', 'Office Chair', 'Blender', 'Kettle', 'Toaster', 'Wall Clock', 'Sunglasses', 'Wallet', 'Umbrella', 'Rain Jacket', 'Sweater', 'Socks', 'Scarf', 'Gloves', 'Beanie', 'Tent', 'Sleeping Bag', 'Camping Stove', 'Flashlight', 'Drill', 'Screwdriver Set', 'Tape Measure', 'Cutting Board', 'Chef Knife', 'Mixing Bowl', 'Teapot', 'Mug', 'Wine Glass', 'Plant Pot', 'Picture Frame', 'Throw Blanket', 'Pillow', 'Bath Towel', 'Shower Curtain', 'Alarm Clock'];
const BRANDS = ['Acme', 'Northwind', 'Contoso', 'Fabrikam', 'Tailspin', 'Woodgrove', 'Litware', 'Proseware', 'Adatum', 'Humongous', 'Lucerne', 'Margie', 'Trey', 'Wingtip', 'Alpine', 'Coho', 'Fourth', 'Graphic', 'Blue Yonder', 'Relecloud', 'Datum', 'Boreal', 'Summit', 'Harbor', 'Meadow', 'Granite', 'Cedar', 'Aurora', 'Beacon', 'Cobalt', 'Delta', 'Ember', 'Falcon', 'Glacier', 'Horizon', 'Iris', 'Juniper', 'Kestrel', 'Lumen', 'Maple'];

/** 2,500 product names (adjective + noun) as a SQL VALUES list with their index. */
const productNamesSql = () => ADJECTIVES.flatMap((adjective, a) => NOUNS.map((noun, n) => `(${a * NOUNS.length + n}, '${adjective} ${noun}')`)).join(',');

async function seedOrders(db: Client, total: number): Promise<void> {
  await db.query(`CREATE TEMP TABLE names (k int PRIMARY KEY, name text NOT NULL); INSERT INTO names VALUES ${productNamesSql()}`);
  // The searchable names column exists from the list_indexes migration on; without it (the code
  // before it, for a "before" figure) the orders are the same and only the items carry names.
  const { rowCount } = await db.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'orders' AND column_name = 'product_names'");
  const names = rowCount
    ? {
        column: ', product_names, name_fragments',
        value: `, first.name || CASE WHEN g % 5 = 0 THEN E'\\n' || second.name ELSE '' END, first.fragments || CASE WHEN g % 5 = 0 THEN second.fragments ELSE '{}' END`,
      }
    : { column: '', value: '' };
  // Each name's lower-cased one- and two-character pieces, as orders-service stores them.
  await db.query(`ALTER TABLE names ADD COLUMN fragments text[];
    UPDATE names SET fragments = ARRAY(SELECT DISTINCT substr(lower(name), start, width) FROM generate_series(1, length(name)) AS start, (VALUES (1), (2)) AS widths(width) WHERE start + width - 1 <= length(name))`);
  // One item each (a fifth of the orders have a second), a shipment each, one second apart;
  // statuses, amounts and coupons spread as a shop's would be.
  await db.query(
    `INSERT INTO orders (id, user_id, status, amount, currency, coupon_code, reservation_key, created_at, updated_at${names.column})
     SELECT gen_random_uuid(), ('01a20000-0000-7000-8000-' || lpad((g % ${USERS})::text, 12, '0'))::uuid,
            (ARRAY['PENDING','CONFIRMED','SHIPPED','DELIVERED','DELIVERED','DELIVERED','CANCELED']::"OrderStatus"[])[1 + (g * 31) % 7],
            ((g::bigint * 7919) % 1000000)::int, 'KRW', CASE WHEN g % 10 = 0 THEN 'SAVE-10' END, 'bench-' || g,
            timestamptz '2026-01-01' + g * interval '1 second', now()${names.value}
     FROM generate_series(1, $1::int) AS g
     JOIN names AS first ON first.k = (g::bigint * 7907) % 2500
     JOIN names AS second ON second.k = (g::bigint * 104729) % 2500`,
    [total],
  );
  await db.query(`INSERT INTO order_items (id, order_id, product_id, sku, product_name, quantity, unit_price, amount)
    SELECT gen_random_uuid(), o.id, ('01a30000-0000-7000-8000-' || lpad(n.k::text, 12, '0'))::uuid, 'SKU-' || n.k, n.name, 1, o.amount, o.amount
    FROM orders AS o
    CROSS JOIN LATERAL (VALUES (substr(o.reservation_key, 7)::bigint)) AS seed(g)
    CROSS JOIN LATERAL (SELECT (seed.g * 7907) % 2500 AS k UNION ALL SELECT (seed.g * 104729) % 2500 WHERE seed.g % 5 = 0) AS picked
    JOIN names AS n ON n.k = picked.k`);
  await db.query('INSERT INTO shipments (order_id, updated_at) SELECT id, now() FROM orders');
}

async function seedUsers(db: Client): Promise<void> {
  await db.query(
    `INSERT INTO users (id, name, email, email_key, marketing_agreed, password_hash, created_at, updated_at)
     SELECT gen_random_uuid(), (ARRAY['Kim','Lee','Park','Choi','Jung','Kang','Cho','Yoon','Jang','Lim'])[1 + g % 10] || ' ' || (ARRAY['Minjun','Seoyeon','Doyun','Jiwoo','Hajun','Seoah','Eunwoo','Jiho','Yerin','Siwoo'])[1 + (g / 10) % 10] || ' ' || g,
            'user' || g || '@example.com', 'user' || g || '@example.com', g % 3 = 0, 'x', timestamptz '2025-01-01' + g * interval '5 minutes', now()
     FROM generate_series(1, $1::int) AS g`,
    [DIRECTORY_ROWS],
  );
}

async function seedProducts(db: Client): Promise<void> {
  const brands = BRANDS.map((brand) => `'${brand}'`).join(',');
  await db.query(`CREATE TEMP TABLE names (k int PRIMARY KEY, name text NOT NULL); INSERT INTO names VALUES ${productNamesSql()}`);
  await db.query(
    `INSERT INTO products (id, sku, name, price, created_at, updated_at, rating)
     SELECT gen_random_uuid(), 'SKU-' || g, (ARRAY[${brands}])[1 + g / 2500 % ${BRANDS.length}] || ' ' || n.name, 1000 + (g * 7919) % 500000,
            timestamptz '2025-01-01' + g * interval '5 minutes', now(), ((g * 31) % 401) / 100.0 + 1
     FROM generate_series(0, $1::int - 1) AS g JOIN names AS n ON n.k = g % 2500`,
    [DIRECTORY_ROWS],
  );
  // Each name's lower-cased one- and two-character pieces, as catalog-service stores them (from
  // the name_fragments migration on; the code before it has no such column).
  const { rowCount } = await db.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'products' AND column_name = 'name_fragments'");
  if (rowCount) {
    await db.query(`UPDATE products SET name_fragments = ARRAY(SELECT DISTINCT substr(lower(name), start, width) FROM generate_series(1, length(name)) AS start, (VALUES (1), (2)) AS widths(width) WHERE start + width - 1 <= length(name))`);
  }
}

interface Shape {
  list: string;
  name: string;
  url: string;
  token: string;
  body?: unknown;
  /** The plain first page of its list (at size 20, or at size 100 for the size=100 shapes), which ratios are taken against. */
  base?: boolean;
}

const pageSizeOf = (shape: Shape) => (/[?&]size=100\b/.test(shape.url) ? 100 : 20);

async function timeRequest(shape: Shape): Promise<number> {
  const started = process.hrtime.bigint();
  const res = await fetch(shape.url, {
    method: shape.body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${shape.token}`, ...(shape.body ? { 'content-type': 'application/json' } : {}) },
    body: shape.body ? JSON.stringify(shape.body) : undefined,
  });
  const body = (await res.json()) as { items?: unknown[] };
  if (res.status !== 200 || !Array.isArray(body.items)) throw new Error(`${shape.name}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 1_000_000);
  const repeats = Number(process.argv[3] ?? 9);
  const keep = process.env.BENCH_KEEP_DATABASES;
  const databases = await createDatabases(['orders', 'users', 'catalog'], keep ? { name: keep } : undefined);
  const stack = await startStack({ apps: ['users-service', 'catalog-service', 'orders-service'], databases: databases.urls, env: { CURSOR_SECRET }, offset });
  const clients = Object.fromEntries(Object.entries(databases.urls).map(([service, url]) => [service, new Client({ connectionString: url })]));
  try {
    for (const client of Object.values(clients)) await client.connect();
    const loadStarted = Date.now();
    const seeded = async (client: Client, table: string) => (await client.query(`SELECT EXISTS (SELECT 1 FROM ${table}) AS any`)).rows[0].any as boolean;
    const reused = databases.reused && (await seeded(clients.orders, 'orders'));
    if (reused) {
      const [{ count }] = (await clients.orders.query('SELECT count(*)::int AS count FROM orders')).rows;
      if (count !== total) throw new Error(`BENCH_KEEP_DATABASES=${keep}: those databases hold ${count} orders, not ${total}; use another name or drop them.`);
    } else {
      await Promise.all([seedOrders(clients.orders, total), seedUsers(clients.users), seedProducts(clients.catalog)]);
    }
    // As autovacuum would have by then: statistics, and the visibility map index-only scans read.
    await Promise.all(Object.values(clients).map((client) => client.query('VACUUM ANALYZE')));
    const loadSeconds = (Date.now() - loadStarted) / 1000;

    const admin = (await issueAccessToken(stack.jwtSecret, { userId: '01a20000-0000-7000-8000-00000000a000', role: 'admin' })).accessToken;
    const customer = (await issueAccessToken(stack.jwtSecret, { userId: '01a20000-0000-7000-8000-000000000042', role: 'customer' })).accessToken;
    // The cursor orders-service hands out after 10,000 pages of 100 newest orders, signed as it signs.
    const sort = { field: 'createdAt', direction: 'desc' } as const;
    const scope = toPageRequest({}, { list: 'orders', sort, filters: {}, secret: CURSOR_SECRET }).scope;
    const { rows: [far] } = await clients.orders.query('SELECT created_at, id FROM orders ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1', [Math.min(total - 2, 999_999)]);
    const farCursor = encodeURIComponent(encodeCursor(CURSOR_SECRET, scope, [far.created_at, far.id]));

    const orders = `http://127.0.0.1:${3002 + offset}/orders`;
    const users = `http://127.0.0.1:${3001 + offset}/users`;
    const products = `http://127.0.0.1:${3003 + offset}/products`;
    const longQ = encodeURIComponent('Noise-Cancelling Bluetooth Headphones with a carrying case and a spare cable, in midnight blue, v2');
    const everyShape: Shape[] = [
      { list: 'orders', name: 'page 1 (newest first)', url: orders, token: admin, base: true },
      { list: 'orders', name: 'page 1, size=100', url: `${orders}?size=100`, token: admin, base: true },
      { list: 'orders', name: 'q matching nothing', url: `${orders}?q=espresso`, token: admin },
      { list: 'orders', name: 'q of 2 letters matching nothing', url: `${orders}?q=zq`, token: admin },
      { list: 'orders', name: 'q of 1 letter', url: `${orders}?q=x`, token: admin },
      { list: 'orders', name: 'q without a trigram (a-b)', url: `${orders}?q=y-d`, token: admin },
      { list: 'orders', name: 'q, a common word', url: `${orders}?q=keyboard`, token: admin },
      { list: 'orders', name: 'q, a rare name', url: `${orders}?q=nordic%20mug`, token: admin },
      { list: 'orders', name: 'withTotal=true', url: `${orders}?withTotal=true`, token: admin },
      { list: 'orders', name: 'q + withTotal=true', url: `${orders}?q=nordic%20mug&withTotal=true`, token: admin },
      { list: 'orders', name: 'status + minAmount', url: `${orders}?status=SHIPPED,DELIVERED&minAmount=990000`, token: admin },
      { list: 'orders', name: 'one status + minAmount', url: `${orders}?status=PENDING&minAmount=990000`, token: admin },
      { list: 'orders', name: 'sort=-amount, status + coupon', url: `${orders}?sort=-amount&status=CANCELED&hasCoupon=true`, token: admin },
      { list: 'orders', name: 'a date range (one day)', url: `${orders}?from=2026-01-05&to=2026-01-05`, token: admin },
      { list: 'orders', name: 'POST /orders/search, 5 conditions', url: `${orders}/search`, token: admin, body: { status: ['PENDING', 'CONFIRMED'], from: '2026-01-03', to: '2026-01-09', minAmount: 500000, hasCoupon: true } },
      { list: 'orders', name: "a customer's own, q", url: `${orders}?q=lamp`, token: customer },
      { list: 'orders', name: 'bad: q of 100 characters', url: `${orders}?q=${longQ}`, token: admin },
      { list: 'orders', name: 'bad: size=100, every filter', url: `${orders}?size=100&status=PENDING,SHIPPED&minAmount=1000&hasCoupon=false&from=2026-01-01&to=2026-12-31&q=chair&sort=-amount&withTotal=true`, token: admin },
      { list: 'orders', name: 'bad: a cursor 1,000,000 deep', url: `${orders}?size=100&cursor=${farCursor}`, token: admin },
      { list: 'users', name: 'page 1 (newest first)', url: users, token: admin, base: true },
      { list: 'users', name: 'page 1, size=100', url: `${users}?size=100`, token: admin, base: true },
      { list: 'users', name: 'withTotal=true', url: `${users}?withTotal=true`, token: admin },
      { list: 'users', name: 'sort=name', url: `${users}?sort=name`, token: admin },
      { list: 'users', name: 'sort=email', url: `${users}?sort=email`, token: admin },
      { list: 'users', name: 'name prefix', url: `${users}?name=Park%20Jiho`, token: admin },
      { list: 'users', name: 'marketingAgreed + date range', url: `${users}?marketingAgreed=true&createdFrom=2025-03-01&createdTo=2025-03-31`, token: admin },
      { list: 'users', name: 'size=100, every filter, withTotal', url: `${users}?size=100&marketingAgreed=false&createdFrom=2025-01-01&createdTo=2025-12-31&name=Kim&sort=-name&withTotal=true`, token: admin },
      { list: 'products', name: 'page 1 (newest first)', url: products, token: customer, base: true },
      { list: 'products', name: 'page 1, size=100', url: `${products}?size=100`, token: customer, base: true },
      { list: 'products', name: 'withTotal=true', url: `${products}?withTotal=true`, token: customer },
      { list: 'products', name: 'q matching nothing', url: `${products}?q=espresso`, token: customer },
      { list: 'products', name: 'q of 2 letters matching nothing', url: `${products}?q=zq`, token: customer },
      { list: 'products', name: 'q, a common word', url: `${products}?q=keyboard`, token: customer },
      { list: 'products', name: 'q + price range, sort=price', url: `${products}?q=mug&minPrice=50000&maxPrice=60000&sort=price`, token: customer },
      { list: 'products', name: 'sort=-rating', url: `${products}?sort=-rating`, token: customer },
      { list: 'products', name: 'bad: q of 100 characters', url: `${products}?q=${longQ}`, token: customer },
      { list: 'products', name: 'bad: size=100, every filter', url: `${products}?size=100&q=lamp&minPrice=1000&maxPrice=400000&sort=-price&withTotal=true`, token: customer },
    ];
    const only = process.env.BENCH_SHAPES?.toLowerCase();
    const shapes = everyShape.filter((shape) => shape.base || !only || `${shape.list} ${shape.name}`.toLowerCase().includes(only));
    for (const shape of shapes) await timeRequest(shape); // warm caches and plans
    const measured: { shape: Shape; median: number; p95: number }[] = [];
    for (const shape of shapes) {
      const samples = [];
      for (let i = 0; i < repeats; i++) samples.push(await timeRequest(shape));
      measured.push({ shape, ...medianAndP95(samples) });
    }
    console.log(`\n${total.toLocaleString('en')} orders, ${DIRECTORY_ROWS.toLocaleString('en')} users and products ${reused ? 'reused (vacuumed' : 'loaded'} in ${loadSeconds.toFixed(0)} s${reused ? ')' : ''}; ${repeats} requests per shape, default size 20, ${new Date().toISOString()}\n`);
    const baseOf = (shape: Shape) => measured.find((row) => row.shape.list === shape.list && row.shape.base && pageSizeOf(row.shape) === pageSizeOf(shape))?.median ?? NaN;
    console.log(
      table(
        measured.map(({ shape, median, p95 }) => ({
          list: shape.list,
          shape: shape.name,
          'median ms': median.toFixed(1),
          'p95 ms': p95.toFixed(1),
          size: pageSizeOf(shape),
          'x page 1': (median / baseOf(shape)).toFixed(2),
          within: median <= 50 && median <= 3 * baseOf(shape) ? 'yes' : 'NO',
        })),
      ),
    );
  } finally {
    for (const client of Object.values(clients)) await client.end().catch(() => undefined);
    await stack.stop();
    if (keep) console.log(`kept ${Object.values(databases.urls).map((url) => new URL(url).pathname.slice(1)).join(', ')} (BENCH_KEEP_DATABASES)`);
    else await databases.drop();
  }
}
