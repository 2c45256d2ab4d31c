// The catalog API as a client sees it: real HTTP, real app, real database.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { demoProducts } from '@platform/catalog-data';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { createLogger, createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { apiClient, tokenFor } from '@platform/test-kit';
import { createCatalogApp } from './app';
import { PrismaClient } from './generated/prisma/client';

const JWT_SECRET = 'catalog-test-secret-catalog-test-secret-0';
let database: Database<PrismaClient>;
let server: Listening;
const call = apiClient(() => server.url);
let admin: string;
let customer: string;

beforeAll(async () => {
  database = await openTestDatabase({ service: 'catalog', migrationsDir: path.join(__dirname, '../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  const built = await createCatalogApp({
    config: { jwtVerifySecrets: [JWT_SECRET], cursorSecret: 'catalog-cursor-secret', REQUEST_TIMEOUT_MS: 10_000, NODE_ENV: 'test' },
    prisma: database.prisma,
    logger: createLogger('catalog-test', 'silent'),
    health: new Health(),
    metrics: createMetrics('catalog-test'),
  });
  expect(await built.products.seedDemoCatalog()).toBe(demoProducts.length);
  expect(await built.products.seedDemoCatalog()).toBe(0);
  server = await listen(built.app, 0, '127.0.0.1');
  admin = (await tokenFor(JWT_SECRET, 'admin')).token;
  customer = (await tokenFor(JWT_SECRET, 'customer')).token;
});

afterAll(async () => {
  await server?.close();
  await database?.close();
});

let skuSeq = 0;
async function createProduct(overrides: Record<string, unknown> = {}) {
  skuSeq += 1;
  const res = await call('POST', '/products', { token: admin, body: { sku: `TEST-${Date.now()}-${skuSeq}`, name: `Test product ${skuSeq}`, price: 1000 * skuSeq, ...overrides } });
  expect(res.status).toBe(201);
  return res.body;
}

describe('GET /products', () => {
  it('lists the seeded demo catalog with every field, newest first', async () => {
    const res = await call('GET', '/products?size=100&withTotal=true', { token: customer });
    expect(res.status).toBe(200);
    expect(res.body.totalCount).toBeGreaterThanOrEqual(20);
    expect(res.body.items[0]).toEqual({
      id: expect.any(String),
      sku: expect.any(String),
      name: expect.any(String),
      description: expect.any(String),
      imageUrl: expect.stringMatching(/^https:\/\//),
      price: expect.any(Number),
      currency: 'KRW',
      rating: 0,
      reviewCount: 0,
      createdAt: expect.any(String),
    });
    expect(new Set(res.body.items.map((p: { sku: string }) => p.sku))).toEqual(expect.objectContaining({ size: res.body.items.length }));
  });

  it('filters by name and price and sorts by price', async () => {
    const res = await call('GET', '/products?q=keyboard&minPrice=50000&maxPrice=200000&sort=price,desc', { token: customer });
    expect(res.status).toBe(200);
    expect(res.body.items.map((p: { sku: string }) => p.sku)).toEqual(['KB-MECH-001', 'KB-WL-022']);
  });

  it('reads a batch by ids (orders pricing)', async () => {
    const all = (await call('GET', '/products?size=3', { token: customer })).body.items;
    const ids = all.map((p: { id: string }) => p.id);
    const res = await call('GET', `/products?ids=${ids.join(',')}`, { token: customer });
    expect(res.body.items.map((p: { id: string }) => p.id).sort()).toEqual([...ids].sort());
    const gap = await call('GET', `/products?ids=${ids[0]},,${ids[1]}`, { token: customer });
    expect([gap.status, gap.body.errors]).toEqual([400, [expect.objectContaining({ field: 'ids[1]', code: 'REQUIRED' })]]);
  });

  it('walks every product once with cursors sorted by name', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const res = await call('GET', `/products?sort=name&size=7${query}`, { token: customer });
      expect(res.status).toBe(200);
      seen.push(...res.body.items.map((p: { name: string }) => p.name));
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(seen.length).toBe(await database.prisma.product.count());
  });

  it('refuses a bad sort, an unknown parameter, a wrongly typed price and min above max', async () => {
    expect((await call('GET', '/products?sort=sku', { token: customer })).status).toBe(400);
    expect((await call('GET', '/products?color=red', { token: customer })).body.errors[0].code).toBe('UNKNOWN_PARAMETER');
    expect((await call('GET', '/products?minPrice=cheap', { token: customer })).status).toBe(400);
    expect((await call('GET', '/products?minPrice=10&maxPrice=5', { token: customer })).status).toBe(422);
  });

  it('answers 422 OUT_OF_RANGE, never a 5xx, for numbers the database cannot hold (minPrice and maxPrice past 32 bits, paging)', async () => {
    for (const name of ['minPrice', 'maxPrice']) {
      for (const value of ['2147483648', '4294967296', '99999999999999999999', '-1']) {
        const res = await call('GET', `/products?${name}=${value}`, { token: customer });
        expect([name, value, res.status, res.body.errors]).toEqual([name, value, 422, [{ field: name, code: 'OUT_OF_RANGE', message: expect.stringMatching(new RegExp(`^${name} must be at (most 1000000000|least 0)\\.$`)) }]]);
      }
    }
    const someProduct = (await call('GET', '/products?size=1', { token: customer })).body.items[0].id as string;
    for (const path of ['/products', `/products/${someProduct}/reviews`]) {
      for (const [name, value] of [['size', '2147483648'], ['page', '2147483648'], ['offset', '-2147483649'], ['limit', '1e3'], ['page', '2147483647'], ['offset', '2147483647']]) {
        const res = await call('GET', `${path}?${name}=${value}`, { token: customer });
        expect([path, name, value, res.status < 500, res.status < 400 || typeof res.body.code === 'string']).toEqual([path, name, value, true, true]);
      }
    }
    const created = await call('POST', '/products', { token: admin, body: { sku: 'BIG-PRICE-1', name: 'Big', price: 2_147_483_648 } });
    expect([created.status, created.body.errors?.[0]?.code]).toEqual([422, 'OUT_OF_RANGE']);
  });

  it('needs a token', async () => {
    const res = await call('GET', '/products');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describe('product writes', () => {
  it('lets an admin create, read, patch, replace and delete a product', async () => {
    const created = await createProduct({ description: 'd', imageUrl: 'https://img.example.com/a.png', currency: 'USD' });
    const read = await call('GET', `/products/${created.id}`, { token: customer });
    expect(read.status).toBe(200);
    expect(read.headers.get('etag')).toBe('"1"');
    expect(read.body).toMatchObject({ sku: created.sku, currency: 'USD', description: 'd' });

    const patched = await call('PATCH', `/products/${created.id}`, { token: admin, body: { price: 4321 }, headers: { 'if-match': '"1"' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ price: 4321, currency: 'USD' });
    expect((await call('PATCH', `/products/${created.id}`, { token: admin, body: { price: 1 }, headers: { 'if-match': '"1"' } })).status).toBe(412);

    const replaced = await call('PUT', `/products/${created.id}`, { token: admin, body: { sku: created.sku, name: 'Renamed', price: 10 } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ name: 'Renamed', description: null, imageUrl: null, currency: 'KRW' });

    // A delete made on a version another admin has since changed is refused, as a change is.
    const stale = await call('DELETE', `/products/${created.id}`, { token: admin, headers: { 'if-match': '"1"' } });
    expect([stale.status, stale.body.code]).toEqual([412, 'PRECONDITION_FAILED']);
    expect((await call('GET', `/products/${created.id}`, { token: admin })).status).toBe(200);
    const deleted = await call('DELETE', `/products/${created.id}`, { token: admin, headers: { 'if-match': replaced.headers.get('etag')! } });
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await call('GET', `/products/${created.id}`, { token: admin })).status).toBe(404);
  });

  it('answers 403 to a customer who creates, changes or deletes a product', async () => {
    const product = await createProduct();
    const attempts = [
      call('POST', '/products', { token: customer, body: { sku: 'X-1', name: 'x', price: 1 } }),
      call('PATCH', `/products/${product.id}`, { token: customer, body: { price: 1 } }),
      call('PUT', `/products/${product.id}`, { token: customer, body: { sku: product.sku, name: 'x', price: 1 } }),
      call('DELETE', `/products/${product.id}`, { token: customer }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    expect((await call('GET', `/products/${product.id}`, { token: customer })).body.price).toBe(product.price);
  });

  it('answers 409 SKU_TAKEN, 400 for missing fields and 422 for broken rules', async () => {
    const product = await createProduct();
    const taken = await call('POST', '/products', { token: admin, body: { sku: product.sku, name: 'dup', price: 1 } });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('SKU_TAKEN');
    const missing = await call('POST', '/products', { token: admin, body: { name: 'no sku' } });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['price', 'sku']);
    const broken = await call('POST', '/products', { token: admin, body: { sku: 'lower-case', name: 'x', price: -5, imageUrl: 'ftp://x' } });
    expect(broken.status).toBe(422);
    expect(broken.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`).sort()).toEqual(['imageUrl:INVALID_FORMAT', 'price:OUT_OF_RANGE', 'sku:INVALID_FORMAT']);
  });

  it('answers 404 for an unknown product id', async () => {
    expect((await call('GET', '/products/01a20097-b6ee-740a-909d-9896572adaa7', { token: customer })).status).toBe(404);
    expect((await call('GET', '/products/not-an-id/rating', { token: customer })).status).toBe(404);
    expect((await call('DELETE', '/products/01a20097-b6ee-740a-909d-9896572adaa7', { token: admin })).status).toBe(404);
  });
});

describe('reviews and rating', () => {
  it('answers a review path whose ids are no ids as an unknown review: 404, Review not found.', async () => {
    const product = await createProduct();
    for (const path of [`/products/${product.id}/reviews/not-an-id`, `/products/not-an-id/reviews/${product.id}`]) {
      const res = await call('GET', path, { token: customer });
      expect([res.status, res.body.code, res.body.message]).toEqual([404, 'NOT_FOUND', 'Review not found.']);
    }
    expect((await call('GET', '/products/not-an-id/reviews', { token: customer })).body.message).toBe('Product not found.');
  });

  it('records a review, refuses a second one by the same user, and updates the rating', async () => {
    const product = await createProduct();
    const alice = await tokenFor(JWT_SECRET);
    const first = await call('POST', `/products/${product.id}/reviews`, { token: alice.token, body: { rating: 4, title: 'Good', body: 'Works well.' } });
    expect(first.status).toBe(201);
    expect(first.headers.get('location')).toBe(`/v1/products/${product.id}/reviews/${first.body.id}`);
    expect(first.body).toEqual({ id: expect.any(String), productId: product.id, userId: alice.userId, rating: 4, title: 'Good', body: 'Works well.', createdAt: expect.any(String) });
    const again = await call('POST', `/products/${product.id}/reviews`, { token: alice.token, body: { rating: 1 } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('REVIEW_EXISTS');
    await call('POST', `/products/${product.id}/reviews`, { token: (await tokenFor(JWT_SECRET)).token, body: { rating: 1 } });
    const rating = await call('GET', `/products/${product.id}/rating`, { token: customer });
    expect(rating.body).toEqual({ productId: product.id, average: 2.5, count: 2, reviewCount: 2, distribution: { '1': 1, '2': 0, '3': 0, '4': 1, '5': 0 } });
    expect((await call('GET', `/products/${product.id}`, { token: customer })).body).toMatchObject({ rating: 2.5, reviewCount: 2 });
    expect((await call('GET', first.headers.get('location')!.replace('/v1', ''), { token: customer })).body.id).toBe(first.body.id);
  });

  it('answers a product read with If-None-Match in full, with the rating a review changed under the same ETag', async () => {
    const product = await createProduct();
    const read = await call('GET', `/products/${product.id}`, { token: customer });
    const etag = read.headers.get('etag')!;
    expect(await call('POST', `/products/${product.id}/reviews`, { token: customer, body: { rating: 5 } })).toMatchObject({ status: 201 });
    // As a browser revalidates (fetch would add `Cache-Control: no-cache`, which skips the check).
    const again = await call('GET', `/products/${product.id}`, { token: customer, headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' } });
    expect([again.status, again.headers.get('etag'), again.body?.rating, again.body?.reviewCount]).toEqual([200, etag, 5, 1]);
  });

  it('answers 422 for a rating outside 1..5 and 404 for an unknown product', async () => {
    const product = await createProduct();
    for (const rating of [0, 6]) {
      const res = await call('POST', `/products/${product.id}/reviews`, { token: customer, body: { rating } });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ field: 'rating', code: 'OUT_OF_RANGE' });
    }
    expect((await call('POST', '/products/01a20097-b6ee-740a-909d-9896572adaa7/reviews', { token: customer, body: { rating: 3 } })).status).toBe(404);
  });

  it('keeps rating and reviewCount exact under concurrent reviews', async () => {
    const product = await createProduct();
    const stars = Array.from({ length: 40 }, (_, i) => (i % 5) + 1);
    const results = await Promise.all(stars.map(async (rating) => call('POST', `/products/${product.id}/reviews`, { token: (await tokenFor(JWT_SECRET)).token, body: { rating } })));
    expect(results.every((res) => res.status === 201)).toBe(true);
    const rating = await call('GET', `/products/${product.id}/rating`, { token: customer });
    expect(rating.body).toEqual({ productId: product.id, average: 3, count: 40, reviewCount: 40, distribution: { '1': 8, '2': 8, '3': 8, '4': 8, '5': 8 } });
    expect(await database.prisma.review.count({ where: { productId: product.id } })).toBe(40);
  });

  it('lists reviews newest first with paging', async () => {
    const product = await createProduct();
    for (let i = 0; i < 3; i++) await call('POST', `/products/${product.id}/reviews`, { token: (await tokenFor(JWT_SECRET)).token, body: { rating: 5, title: `r${i}` } });
    const first = await call('GET', `/products/${product.id}/reviews?size=2&withTotal=true`, { token: customer });
    expect(first.body).toMatchObject({ hasNext: true, totalCount: 3 });
    expect(first.body.items.map((r: { title: string }) => r.title)).toEqual(['r2', 'r1']);
    const second = await call('GET', `/products/${product.id}/reviews?size=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, { token: customer });
    expect(second.body).toMatchObject({ hasNext: false, nextCursor: null });
    expect(second.body.items.map((r: { title: string }) => r.title)).toEqual(['r0']);
  });
});

describe('catalog subgraph', () => {
  const graphql = (query: string, variables?: Record<string, unknown>, token = customer) => call('POST', '/graphql', { token, body: { query, variables } });

  it('composes with an orders subgraph that owns Order and provides productId', () => {
    const catalogSdl = readFileSync(path.join(__dirname, 'graphql/schema.graphql'), 'utf8');
    const ordersStub = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Order @key(fields: "id") { id: ID! amount: Int! productId: ID }
      type Query { order(id: ID!): Order }`;
    const result = composeServices([
      { name: 'catalog', typeDefs: parse(catalogSdl), url: 'http://catalog' },
      { name: 'orders', typeDefs: parse(ordersStub), url: 'http://orders' },
    ]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.supergraphSdl).toContain('reviewCount: Int!');
    expect(result.supergraphSdl).toMatch(/product: Product @join__field\(graph: CATALOG, requires: "productId"\)/);
  });

  it('resolves Order.product, Order.reviewCount and Product references in one batch, as the gateway asks', async () => {
    const product = await createProduct({ imageUrl: 'https://img.example.com/p.png' });
    await call('POST', `/products/${product.id}/reviews`, { token: (await tokenFor(JWT_SECRET)).token, body: { rating: 5 } });
    const res = await graphql(
      `query($r: [_Any!]!) { _entities(representations: $r) { ... on Order { product { name } reviewCount } ... on Product { id name imageUrl rating } } }`,
      { r: [{ __typename: 'Order', id: 'o1', productId: product.id }, { __typename: 'Product', id: product.id }, { __typename: 'Order', id: 'o2', productId: null }] },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { _entities: [{ product: { name: product.name }, reviewCount: 1 }, { id: product.id, name: product.name, imageUrl: 'https://img.example.com/p.png', rating: 5 }, { product: null, reviewCount: 0 }] } });
  });

  it('answers product(id) and a NOT_FOUND error for an unknown one', async () => {
    const product = await createProduct();
    expect((await graphql('query($id: ID!) { product(id: $id) { name price currency } }', { id: product.id })).body.data.product).toEqual({ name: product.name, price: product.price, currency: 'KRW' });
    const missing = await graphql('query($id: ID!) { product(id: $id) { name } }', { id: '01a20097-b6ee-740a-909d-9896572adaa7' });
    expect(missing.body.data.product).toBeNull();
    expect(missing.body.errors[0].extensions.code).toBe('NOT_FOUND');
  });
});

describe('admin-only writes', () => {
  it('answer 403 to a customer whatever the body, before validating it', async () => {
    const someProduct = (await call('GET', '/products?size=1', { token: customer })).body.items[0].id as string;
    for (const [method, path] of [['POST', '/products'], ['PATCH', `/products/${someProduct}`], ['PUT', `/products/${someProduct}`], ['DELETE', `/products/${someProduct}`]] as const) {
      const res = await call(method, path, { token: customer, body: method === 'DELETE' ? undefined : { name: '' } });
      expect([method, res.status, res.body.code]).toEqual([method, 403, 'FORBIDDEN']);
    }
  });

  it('answer 403 to a customer and 401 to a stranger whose body is not JSON or nests too deep, and 400 to an admin', async () => {
    const someProduct = (await call('GET', '/products?size=1', { token: customer })).body.items[0].id as string;
    for (const body of ['{"sku":', '['.repeat(65) + ']'.repeat(65)]) {
      for (const [method, path] of [['POST', '/products'], ['PATCH', `/products/${someProduct}`], ['PUT', `/products/${someProduct}`]] as const) {
        const asCustomer = await call(method, path, { token: customer, body });
        const asStranger = await call(method, path, { body });
        const asAdmin = await call(method, path, { token: admin, body });
        expect([method, asCustomer.status, asCustomer.body.code, asStranger.status, asAdmin.status, asAdmin.body.code]).toEqual([method, 403, 'FORBIDDEN', 401, 400, 'MALFORMED_JSON']);
      }
    }
  });
});

// Last in the file: these add products every test above would see.
describe('GET /products at the edges of q and withTotal', () => {
  it('matches one and two letters, and keywords without three letters in a row, any case, with % and _ as plain characters', async () => {
    const tag = `Qx${Date.now()}`;
    const odd = await createProduct({ name: `Tape 50%_off (A-4) ${tag}` });
    const plain = await createProduct({ name: `Tape 50xoff (A-4) ${tag}` });
    const renamed = await createProduct({ name: `Plain ${tag}` });
    const patched = await call('PATCH', `/products/${renamed.id}`, { token: admin, body: { name: `Jq ${tag}` }, headers: { 'if-match': '"1"' } });
    expect(patched.status).toBe(200);
    const search = async (q: string) => {
      const res = await call('GET', `/products?q=${encodeURIComponent(q)}&size=100&withTotal=true`, { token: customer });
      expect(res.status).toBe(200);
      expect(res.body.totalCount).toBe(res.body.items.length);
      return res.body.items.map((p: { id: string }) => p.id).sort();
    };
    expect(await search('%')).toEqual([odd.id]);
    expect(await search('%_')).toEqual([odd.id]);
    expect(await search('0%_O')).toEqual([odd.id]);
    expect(await search('a-4')).toEqual([odd.id, plain.id].sort());
    expect(await search('_')).toEqual([odd.id]);
    expect(await search('JQ')).toEqual([renamed.id]);
    expect(await search('pl')).not.toContain(renamed.id);
    expect(await search('zq')).toEqual([]);
    expect(await search('l%p')).toEqual([]);
  });

  it('pages a short q list with cursors in every sort order, each match once, as one large page has them', async () => {
    for (const sort of ['name', '-price', 'rating', '-createdAt']) {
      const all = await call('GET', `/products?q=e&sort=${sort}&size=100`, { token: customer });
      expect(all.status).toBe(200);
      const walked: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await call('GET', `/products?q=e&sort=${sort}&size=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: customer });
        expect(res.status).toBe(200);
        walked.push(...res.body.items.map((p: { id: string }) => p.id));
        cursor = res.body.nextCursor;
      } while (cursor && walked.length < 100);
      expect(walked.slice(0, all.body.items.length)).toEqual(all.body.items.map((p: { id: string }) => p.id));
    }
  });

  it('counts exactly up to 1,000 products and, past that, answers an estimate flagged by Total-Count-Estimated', async () => {
    await database.prisma.$executeRawUnsafe(
      `INSERT INTO products (id, sku, name, price, updated_at, name_fragments)
       SELECT gen_random_uuid(), 'MANY-' || g, 'Many Mug ' || g, 1000, now(), '{}' FROM generate_series(1, 1050) AS g`,
    );
    await database.prisma.$executeRawUnsafe('ANALYZE products');
    const estimated = await call('GET', '/products?q=many%20mug&withTotal=true&size=1', { token: customer });
    expect(estimated.status).toBe(200);
    expect(estimated.body.totalCount).toBeGreaterThan(1_000);
    expect(estimated.headers.get('total-count-estimated')).toBe('true');
    expect(estimated.body).not.toHaveProperty('totalCountEstimated');
    const exact = await call('GET', '/products?q=many%20mug%20104&withTotal=true&size=1', { token: customer });
    expect(exact.body.totalCount).toBe(11); // 104 and 1040..1049
    expect(exact.headers.get('total-count-estimated')).toBeNull();
  });
});
