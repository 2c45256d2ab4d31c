// The events catalog-service records: products created, changed and deleted, and reviews, each
// with the change that makes it, none for a change that did not happen.
import path from 'node:path';
import { serviceTokenSource } from '@platform/auth';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { EventConsumer, type EventTransport, toCloudEvent } from '@platform/events';
import { newId } from '@platform/ids';
import { createLogger, createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { apiClient, clockMovingOnDelete, tokenFor, whileClockMoves } from '@platform/test-kit';
import { createCatalogApp } from './app';
import { PrismaClient } from './generated/prisma/client';

const JWT_SECRET = 'catalog-events-secret-catalog-events-0123';
let database: Database<PrismaClient>;
let server: Listening;
let built: Awaited<ReturnType<typeof createCatalogApp>>;
let appDeps: Parameters<typeof createCatalogApp>[0];
const call = apiClient(() => server.url);
let admin: string;
let customer: { token: string; userId: string };

beforeAll(async () => {
  database = await openTestDatabase({ service: 'catalog_events', migrationsDir: path.join(__dirname, '../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  appDeps = {
    config: { jwtVerifySecrets: [JWT_SECRET], cursorSecret: 'catalog-cursor-secret', REQUEST_TIMEOUT_MS: 10_000, NODE_ENV: 'test' },
    prisma: database.prisma,
    logger: createLogger('catalog-events-test', 'silent'),
    health: new Health(),
    metrics: createMetrics('catalog-events-test'),
  };
  built = await createCatalogApp(appDeps);
  server = await listen(built.app, 0, '127.0.0.1');
  admin = (await tokenFor(JWT_SECRET, 'admin')).token;
  customer = await tokenFor(JWT_SECRET, 'customer');
});

afterAll(async () => {
  await server?.close();
  await database?.close();
});

const eventsOf = async (aggregateId: string) => (await database.prisma.outboxEvent.findMany({ where: { aggregateId }, orderBy: { position: 'asc' } })).map((event) => [event.type, event.sequence, event.data]);

it('records product.created, product.updated and product.deleted; a refused change records nothing', async () => {
  const created = await call('POST', '/products', { token: admin, body: { sku: 'EVT-1', name: 'Kettle', price: 30_000 } });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  expect((await call('PATCH', `/products/${id}`, { token: admin, body: { price: 28_000 } })).status).toBe(200);
  expect((await call('PATCH', `/products/${id}`, { token: admin, headers: { 'if-match': '"1"' }, body: { price: 1 } })).status).toBe(412);
  expect((await call('PATCH', `/products/${id}`, { token: customer.token, body: { price: 1 } })).status).toBe(403);
  expect((await call('POST', '/products', { token: admin, body: { sku: 'EVT-1', name: 'Twin', price: 1 } })).status).toBe(409);
  expect((await call('DELETE', `/products/${id}`, { token: admin })).status).toBe(204);
  // What orders prices from (GET /products?ids=) no longer lists it, so it can no longer be ordered.
  expect((await call('GET', `/products?ids=${id}`, { token: customer.token })).body.items).toEqual([]);
  expect(await eventsOf(id)).toEqual([
    ['product.created', 1, { id, sku: 'EVT-1', name: 'Kettle', price: 30_000, currency: 'KRW', version: 1 }],
    ['product.updated', 2, { id, sku: 'EVT-1', name: 'Kettle', price: 28_000, currency: 'KRW', version: 2 }],
    ['product.deleted', 3, { id, sku: 'EVT-1' }],
  ]);
  expect(await database.prisma.outboxEvent.count({ where: { type: 'product.created' } })).toBe(1);
});

it('a PATCH or PUT that changes nothing records nothing and leaves the ETag; If-Match still counts', async () => {
  const whole = { sku: 'EVT-SAME', name: 'Mug', price: 9_000, description: 'Blue', imageUrl: 'https://img.example.com/mug.png', currency: 'KRW' };
  const id = (await call('POST', '/products', { token: admin, body: whole })).body.id as string;
  for (const [method, body] of [['PATCH', {}], ['PATCH', { price: 9_000, name: 'Mug' }], ['PUT', whole]] as const) {
    const res = await call(method, `/products/${id}`, { token: admin, body });
    expect([method, res.status, res.headers.get('etag')]).toEqual([method, 200, '"1"']);
  }
  expect((await call('PATCH', `/products/${id}`, { token: admin, headers: { 'if-match': '"4"' }, body: {} })).status).toBe(412);
  expect((await call('PATCH', `/products/${id}`, { token: admin, body: { price: 9_500 } })).headers.get('etag')).toBe('"2"');
  expect((await eventsOf(id)).map(([type]) => type)).toEqual(['product.created', 'product.updated']);
});

it('records review.created with the review; a second review by the same user records nothing', async () => {
  const product = (await call('POST', '/products', { token: admin, body: { sku: 'EVT-2', name: 'Teapot', price: 20_000 } })).body;
  const review = await call('POST', `/products/${product.id}/reviews`, { token: customer.token, body: { rating: 4, title: 'Good' } });
  expect(review.status).toBe(201);
  expect((await call('POST', `/products/${product.id}/reviews`, { token: customer.token, body: { rating: 1 } })).status).toBe(409);
  expect(await eventsOf(review.body.id)).toEqual([['review.created', 1, { id: review.body.id, productId: product.id, userId: customer.userId, rating: 4 }]]);
  expect(await database.prisma.outboxEvent.count({ where: { type: 'review.created' } })).toBe(1);
});

it('GraphQL createReview records the same review.created as REST POST /products/{id}/reviews; a refused one records nothing', async () => {
  const product = (await call('POST', '/products', { token: admin, body: { sku: 'EVT-5', name: 'Pan', price: 15_000 } })).body;
  const viaRest = await call('POST', `/products/${product.id}/reviews`, { token: customer.token, body: { rating: 3, title: 'Fine', body: 'Heats evenly.' } });
  const other = await tokenFor(JWT_SECRET, 'customer');
  const viaGraphql = await call('POST', '/graphql', {
    token: other.token,
    body: { query: 'mutation($productId: ID!, $input: CreateReviewInput!) { createReview(productId: $productId, input: $input) { id } }', variables: { productId: product.id, input: { rating: 3, title: 'Fine', body: 'Heats evenly.' } } },
  });
  const graphqlId = viaGraphql.body.data.createReview.id as string;
  const refused = await call('POST', '/graphql', { token: other.token, body: { query: 'mutation($productId: ID!) { createReview(productId: $productId, input: { rating: 1 }) { id } }', variables: { productId: product.id } } });
  expect(refused.body.errors[0].extensions.code).toBe('REVIEW_EXISTS');
  expect(await eventsOf(viaRest.body.id)).toEqual([['review.created', 1, { id: viaRest.body.id, productId: product.id, userId: customer.userId, rating: 3 }]]);
  expect(await eventsOf(graphqlId)).toEqual([['review.created', 1, { id: graphqlId, productId: product.id, userId: other.userId, rating: 3 }]]);
  expect(await database.prisma.outboxEvent.count({ where: { type: 'review.created', data: { path: ['productId'], equals: product.id } } })).toBe(2);
});

it("user.deleted keeps the user's reviews without their author and the ratings unchanged; a redelivery changes nothing", async () => {
  const leaving = await tokenFor(JWT_SECRET, 'customer');
  const product = (await call('POST', '/products', { token: admin, body: { sku: 'EVT-3', name: 'Mug', price: 9_000 } })).body;
  const review = (await call('POST', `/products/${product.id}/reviews`, { token: leaving.token, body: { rating: 5, title: 'Lovely' } })).body;
  expect((await call('POST', `/products/${product.id}/reviews`, { token: customer.token, body: { rating: 2 } })).status).toBe(201);
  const ratingBefore = (await call('GET', `/products/${product.id}/rating`, { token: customer.token })).body;

  const consumer = new EventConsumer(database.prisma, { kind: 'embedded' } as EventTransport, createLogger('consumer-test', 'silent'), { consumer: 'catalog-service', sources: ['users-service'], handlers: built.eventHandlers });
  const event = toCloudEvent('/users-service', { id: newId(), type: 'user.deleted', aggregateType: 'user', aggregateId: leaving.userId, sequence: 2, data: { id: leaving.userId }, occurredAt: new Date() }).toJSON() as Record<string, unknown>;
  expect(await consumer.deliver({ event, attempt: 1 })).toBe('handled');
  expect(await consumer.deliver({ event, attempt: 2 })).toBe('duplicate');

  const kept = await call('GET', `/products/${product.id}/reviews/${review.id}`, { token: customer.token });
  expect(kept.body).toMatchObject({ id: review.id, userId: null, rating: 5, title: 'Lovely' });
  expect((await call('GET', `/products/${product.id}/rating`, { token: customer.token })).body).toEqual(ratingBefore);
});

it("a review posted after user.deleted was handled, with the deleted user's token still accepted, is refused (401): no review stays linked to a deleted account", async () => {
  const leaving = await tokenFor(JWT_SECRET, 'customer');
  const product = (await call('POST', '/products', { token: admin, body: { sku: 'EVT-6', name: 'Cup', price: 4_000 } })).body;
  const consumer = new EventConsumer(database.prisma, { kind: 'embedded' } as EventTransport, createLogger('consumer-test', 'silent'), { consumer: 'catalog-service', sources: ['users-service'], handlers: built.eventHandlers });
  const event = toCloudEvent('/users-service', { id: newId(), type: 'user.deleted', aggregateType: 'user', aggregateId: leaving.userId, sequence: 2, data: { id: leaving.userId }, occurredAt: new Date() }).toJSON() as Record<string, unknown>;
  expect(await consumer.deliver({ event, attempt: 1 })).toBe('handled');

  // The gateway trusts a credential check for a few seconds: the token outlives the account briefly.
  const late = await call('POST', `/products/${product.id}/reviews`, { token: leaving.token, body: { rating: 1, title: 'Gone' } });
  expect(late.status).toBe(401);
  expect(late.body).toMatchObject({ code: 'UNAUTHENTICATED' });
  expect(await database.prisma.review.count({ where: { userId: leaving.userId } })).toBe(0);
  expect(await database.prisma.outboxEvent.count({ where: { type: 'review.created', data: { path: ['userId'], equals: leaving.userId } } })).toBe(0);
  expect((await call('GET', `/products/${product.id}/rating`, { token: customer.token })).body).toMatchObject({ count: 0 });
});

it('a user.deleted its handler could not take waits in the dead letters, and a replay through /internal/dead-letters (service tokens only) unlinks the review', async () => {
  const leaving = await tokenFor(JWT_SECRET, 'customer');
  const product = (await call('POST', '/products', { token: admin, body: { sku: 'EVT-4', name: 'Jug', price: 9_000 } })).body;
  const review = (await call('POST', `/products/${product.id}/reviews`, { token: leaving.token, body: { rating: 3, title: 'Fine' } })).body;
  // A consumer whose handler fails every time (its database away, say) parks the event after its attempts.
  const failing = new EventConsumer(database.prisma, { kind: 'embedded' } as EventTransport, createLogger('consumer-test', 'silent'), {
    consumer: 'catalog-service',
    sources: ['users-service'],
    maxAttempts: 2,
    handlers: { 'user.deleted': async () => Promise.reject(new Error('reviews unreachable')) },
  });
  const eventId = newId();
  const event = toCloudEvent('/users-service', { id: eventId, type: 'user.deleted', aggregateType: 'user', aggregateId: leaving.userId, sequence: 2, data: { id: leaving.userId }, occurredAt: new Date() }).toJSON() as Record<string, unknown>;
  await expect(failing.deliver({ event, attempt: 1 })).rejects.toThrow('reviews unreachable');
  expect(await failing.deliver({ event, attempt: 2 })).toBe('parked');

  const service = await serviceTokenSource(JWT_SECRET, 'events-cli')();
  expect((await call('GET', '/internal/dead-letters', { token: admin })).status).toBe(401);
  const listed = await call('GET', '/internal/dead-letters', { token: service });
  expect(listed.body.items).toEqual([expect.objectContaining({ id: eventId, type: 'user.deleted', attempts: 2, error: 'reviews unreachable' })]);
  // The service's own handlers (the cause fixed) take it now.
  const replayed = await call('POST', `/internal/dead-letters/${eventId}/replay`, { token: service });
  expect(replayed.body).toMatchObject({ outcome: 'handled', deadLetter: { id: eventId, replayedAt: expect.any(String) } });
  expect((await call('GET', `/products/${product.id}/reviews/${review.id}`, { token: customer.token })).body).toMatchObject({ id: review.id, userId: null, rating: 3 });
}, 120_000);

// Last: the tests above count every product.created and review.created.
it("product and review events happened exactly when their rows were written: their time is the createdAt, then the updatedAt", async () => {
  // The event's time (a webhook's `timestamp`) was the transaction's start, milliseconds before
  // the time Prisma stamped on the row: a receiver saw the event before the change.
  const created = await call('POST', '/products', { token: admin, body: { sku: 'EVT-TIME', name: 'Clock', price: 9_000 } });
  const id = created.body.id as string;
  expect((await call('PATCH', `/products/${id}`, { token: admin, body: { price: 8_000 } })).status).toBe(200);
  const row = await database.prisma.product.findUniqueOrThrow({ where: { id } });
  const times = (await database.prisma.outboxEvent.findMany({ where: { aggregateId: id }, orderBy: { position: 'asc' } })).map((event) => [event.type, event.occurredAt.toISOString()]);
  expect(times).toEqual([
    ['product.created', created.body.createdAt],
    ['product.updated', row.updatedAt.toISOString()],
  ]);
  const review = await call('POST', `/products/${id}/reviews`, { token: customer.token, body: { rating: 4 } });
  expect(review.status).toBe(201);
  const reviewEvent = await database.prisma.outboxEvent.findFirstOrThrow({ where: { aggregateId: review.body.id, type: 'review.created' } });
  expect(reviewEvent.occurredAt.toISOString()).toBe(review.body.createdAt);
});

it('product.deleted happens when the row went, not when its transaction began: never before the product.updated a DELETE waited for', async () => {
  // A DELETE without If-Match that meets a PATCH's row lock waits for it, then deletes: the
  // PATCH's updatedAt (its answer, its event's time) is later than the DELETE's transaction
  // start, so product.deleted at that start came, by its time, before the update it follows.
  // Here the clock moves on while the DELETE statement runs, as it does during that wait.
  const created = await call('POST', '/products', { token: admin, body: { sku: 'EVT-GONE', name: 'Gone', price: 1_000 } });
  const id = created.body.id as string;
  const waiting = clockMovingOnDelete(database.prisma, 'product');
  const app = await createCatalogApp({ ...appDeps, prisma: waiting.prisma, metrics: createMetrics('catalog-events-waiting') });
  const waitingServer = await listen(app.app, 0, '127.0.0.1');
  try {
    expect(await whileClockMoves(async () => (await apiClient(() => waitingServer.url)('DELETE', `/products/${id}`, { token: admin })).status)).toBe(204);
  } finally {
    await waitingServer.close();
  }
  const deleted = await database.prisma.outboxEvent.findFirstOrThrow({ where: { aggregateId: id, type: 'product.deleted' } });
  expect(deleted.occurredAt.getTime()).toBeGreaterThanOrEqual(waiting.movedTo().getTime());
});
