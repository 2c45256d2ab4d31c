// The events users-service records: one per change a client makes, committed with it, none for
// a change that did not happen, none carrying a credential; and its published log, which only
// other services may read.
import path from 'node:path';
import { serviceTokenSource } from '@platform/auth';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { EmbeddedTransport, OutboxRelay } from '@platform/events';
import { createLogger, createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { apiClient, clockMovingOnDelete, whileClockMoves } from '@platform/test-kit';
import { PrismaClient } from '../generated/prisma/client';
import { createUsersApp } from '../app';

const JWT_SECRET = 'users-events-secret-users-events-0123456';
const logger = createLogger('users-events-test', 'silent');
let database: Database<PrismaClient>;
let server: Listening;
let adminToken: string;
let appDeps: Parameters<typeof createUsersApp>[0];
const call = apiClient(() => server.url);

beforeAll(async () => {
  database = await openTestDatabase({ service: 'users_events', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  appDeps = {
    config: { jwtSecret: JWT_SECRET, jwtVerifySecrets: [JWT_SECRET], cursorSecret: 'cursor-secret-for-tests', ACCESS_TOKEN_TTL_S: 600, REQUEST_TIMEOUT_MS: 10_000, NODE_ENV: 'test' },
    prisma: database.prisma,
    logger,
    health: new Health(),
    metrics: createMetrics('users-events-test'),
  };
  const built = await createUsersApp(appDeps);
  await built.users.bootstrapAdmin('root@example.com', 'root-password-1');
  server = await listen(built.app, 0, '127.0.0.1');
  adminToken = (await call('POST', '/tokens', { body: { email: 'root@example.com', password: 'root-password-1' } })).body.accessToken;
});

afterAll(async () => {
  await server?.close();
  await database?.close();
});

const eventsOf = (aggregateId: string) => database.prisma.outboxEvent.findMany({ where: { aggregateId }, orderBy: { position: 'asc' } });

it('records user.created, user.updated and user.deleted with the changes, in sequence, without credentials', async () => {
  const created = await call('POST', '/users', { body: { name: 'Lee', email: 'lee-events@example.com', password: 'correct-horse-1' } });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const token = (await call('POST', '/tokens', { body: { email: 'lee-events@example.com', password: 'correct-horse-1' } })).body.accessToken as string;

  expect((await call('PATCH', `/users/${id}`, { token, body: { name: 'Lee Jieun', password: 'correct-horse-2' } })).status).toBe(200);
  // A change that does not happen records nothing: a stale If-Match, a taken email.
  expect((await call('PATCH', `/users/${id}`, { token, headers: { 'if-match': '"1"' }, body: { name: 'Stale' } })).status).toBe(412);
  expect((await call('PATCH', `/users/${id}`, { token, body: { email: 'root@example.com' } })).status).toBe(409);
  expect((await call('DELETE', `/users/${id}`, { token: adminToken })).status).toBe(204);

  const events = await eventsOf(id);
  expect(events.map((event) => [event.type, event.sequence])).toEqual([
    ['user.created', 1],
    ['user.updated', 2],
    ['user.deleted', 3],
  ]);
  expect(events[0].data).toEqual({ id, role: 'customer', name: 'Lee', email: 'lee-events@example.com', version: 1, createdAt: created.body.createdAt });
  expect(events[1].data).toMatchObject({ name: 'Lee Jieun', version: 2 });
  expect(events[2].data).toEqual({ id });
  const everything = JSON.stringify(await database.prisma.outboxEvent.findMany({ select: { data: true } }));
  expect(everything).not.toMatch(/correct-horse|scrypt|password|accessToken/i);
});

it("user.created and user.updated happened exactly when the user was written: their time is the row's createdAt, then its updatedAt", async () => {
  // The event's time (a webhook's `timestamp`) was the transaction's start, milliseconds before
  // the time Prisma stamped on the row: a receiver saw the event before the change.
  const created = await call('POST', '/users', { body: { name: 'Moon', email: 'moon-events@example.com', password: 'correct-horse-1' } });
  const id = created.body.id as string;
  const token = (await call('POST', '/tokens', { body: { email: 'moon-events@example.com', password: 'correct-horse-1' } })).body.accessToken as string;
  expect((await call('PATCH', `/users/${id}`, { token, body: { name: 'Moon Byul' } })).status).toBe(200);
  const afterPatch = await database.prisma.user.findUniqueOrThrow({ where: { id } });
  expect((await call('PUT', `/users/${id}`, { token, body: { name: 'Moon B', email: 'moon-events@example.com' } })).status).toBe(200);
  const afterPut = await database.prisma.user.findUniqueOrThrow({ where: { id } });
  expect((await eventsOf(id)).map((event) => [event.type, event.occurredAt.toISOString()])).toEqual([
    ['user.created', created.body.createdAt],
    ['user.updated', afterPatch.updatedAt.toISOString()],
    ['user.updated', afterPut.updatedAt.toISOString()],
  ]);
  expect(afterPatch.createdAt.toISOString()).toBe(created.body.createdAt);
});

it('a PATCH or PUT that changes nothing records nothing and leaves the ETag; If-Match still counts', async () => {
  const profile = { name: 'Same', email: 'same-events@example.com', phone: '010-1234-5678', address: { zipCode: '04524', line1: 'Sejong-daero 110', line2: null }, nickname: 'same', marketingAgreed: true };
  const created = await call('POST', '/users', { body: { ...profile, password: 'correct-horse-1' } });
  const id = created.body.id as string;
  const token = (await call('POST', '/tokens', { body: { email: profile.email, password: 'correct-horse-1' } })).body.accessToken as string;
  for (const [method, body] of [['PATCH', {}], ['PATCH', { nickname: 'same', address: profile.address }], ['PUT', profile]] as const) {
    const res = await call(method, `/users/${id}`, { token, body });
    expect([method, res.status, res.headers.get('etag')]).toEqual([method, 200, '"1"']);
  }
  expect((await call('PATCH', `/users/${id}`, { token, headers: { 'if-match': '"5"' }, body: {} })).status).toBe(412);
  expect((await call('PATCH', `/users/${id}`, { token, body: { nickname: 'other' } })).headers.get('etag')).toBe('"2"');
  expect((await eventsOf(id)).map((event) => event.type)).toEqual(['user.created', 'user.updated']);
});

it('a sign-up refused for a taken email records nothing', async () => {
  const before = await database.prisma.outboxEvent.count();
  expect((await call('POST', '/users', { body: { name: 'Twin', email: 'ROOT@example.com', password: 'correct-horse-1' } })).status).toBe(409);
  expect(await database.prisma.outboxEvent.count()).toBe(before);
});

it('GraphQL updateMe records the same user.updated as REST PATCH /users/{id}; a refused one records nothing', async () => {
  const signUp = async (email: string) => {
    const id = (await call('POST', '/users', { body: { name: 'Before', email, password: 'correct-horse-1' } })).body.id as string;
    return { id, email, token: (await call('POST', '/tokens', { body: { email, password: 'correct-horse-1' } })).body.accessToken as string };
  };
  const viaRest = await signUp('rest-parity@example.com');
  const viaGraphql = await signUp('graphql-parity@example.com');
  const changes = { name: 'After', nickname: 'parity', phone: '+82 10-1234-5678' };
  expect((await call('PATCH', `/users/${viaRest.id}`, { token: viaRest.token, body: changes })).status).toBe(200);
  const updated = await call('POST', '/graphql', { token: viaGraphql.token, body: { query: 'mutation($input: UpdateMeInput!) { updateMe(input: $input) { id } }', variables: { input: changes } } });
  expect(updated.body).toEqual({ data: { updateMe: { id: viaGraphql.id } } });
  const taken = await call('POST', '/graphql', { token: viaGraphql.token, body: { query: 'mutation { updateMe(input: { email: "root@example.com" }) { id } }' } });
  expect(taken.body.errors[0].extensions.code).toBe('EMAIL_TAKEN');

  const recorded = async (user: { id: string; email: string }) => {
    const events = await eventsOf(user.id);
    return events.map((event) => {
      const { id, email, createdAt, ...rest } = event.data as Record<string, unknown>;
      expect([id, email, typeof createdAt]).toEqual([user.id, user.email, 'string']);
      return [event.type, event.sequence, rest];
    });
  };
  const fromRest = await recorded(viaRest);
  expect(fromRest).toEqual([
    ['user.created', 1, { role: 'customer', name: 'Before', version: 1 }],
    ['user.updated', 2, { role: 'customer', name: 'After', version: 2 }],
  ]);
  expect(await recorded(viaGraphql)).toEqual(fromRest);
});

it('serves its published events to services only, as CloudEvents in log order', async () => {
  const created = await call('POST', '/users', { body: { name: 'Park', email: 'park-events@example.com', password: 'correct-horse-1' } });
  const relay = new OutboxRelay(database.prisma, new EmbeddedTransport({ producers: {}, serviceToken: async () => '', logger }), logger, { service: 'users-service' });
  while ((await relay.publishBatch()) > 0);

  const serviceToken = await serviceTokenSource(JWT_SECRET, 'orders-service')();
  const page = await call('GET', '/internal/events?after=0&limit=500', { token: serviceToken });
  expect(page.status).toBe(200);
  const entries = page.body.events as { position: string; event: Record<string, unknown> }[];
  expect(entries.map((entry) => Number(entry.position))).toEqual(entries.map((_, index) => index + 1));
  expect(entries.at(-1)?.event).toMatchObject({ specversion: '1.0', source: '/users-service', type: 'user.created', subject: `user/${created.body.id}`, aggregatesequence: 1 });
  const after = await call('GET', `/internal/events?after=${entries.at(-1)?.position}`, { token: serviceToken });
  expect(after.body.events).toEqual([]);

  expect((await call('GET', '/internal/events', { token: adminToken })).status).toBe(401);
  expect((await call('GET', '/internal/events')).status).toBe(401);
  expect((await call('GET', '/internal/events?after=-1', { token: serviceToken })).status).toBe(422);
  expect((await call('GET', '/internal/events?limit=100000', { token: serviceToken })).status).toBe(422);
});

it('user.deleted happens when the row went, not when its transaction began: never before the user.updated a DELETE waited for', async () => {
  // A DELETE without If-Match that meets a PATCH's row lock waits for it, then deletes: the
  // PATCH's updatedAt (its answer, its event's time) is later than the DELETE's transaction
  // start, so user.deleted at that start came, by its time, before the update it follows.
  // Here the clock moves on while the DELETE statement runs, as it does during that wait.
  const created = await call('POST', '/users', { body: { name: 'Gone', email: 'gone-events@example.com', password: 'correct-horse-1' } });
  const waiting = clockMovingOnDelete(database.prisma, 'user');
  const app = await createUsersApp({ ...appDeps, prisma: waiting.prisma, metrics: createMetrics('users-events-waiting') });
  const waitingServer = await listen(app.app, 0, '127.0.0.1');
  try {
    expect(await whileClockMoves(async () => (await apiClient(() => waitingServer.url)('DELETE', `/users/${created.body.id}`, { token: adminToken })).status)).toBe(204);
  } finally {
    await waitingServer.close();
  }
  const deleted = await database.prisma.outboxEvent.findFirstOrThrow({ where: { aggregateId: created.body.id, type: 'user.deleted' } });
  expect(deleted.occurredAt.getTime()).toBeGreaterThanOrEqual(waiting.movedTo().getTime());
});
