// The gateway's usage recording and deprecation reports, as a client and an admin see them: the
// `fields` parameter (checked, stripped, the answer whole), what is recorded per caller, and
// GET /v1/deprecations and /v1/me/deprecations.
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { Registry } from 'prom-client';
import { newApiKeyText } from '@platform/auth';
import { newId } from '@platform/ids';
import { createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { freePort, tokenFor } from '@platform/test-kit';
import { FileUsageStore, RedisUsageStore, UsageRecorder, usageByCaller, USAGE_METRIC_SERIES } from '@platform/usage';
import type { Deprecation } from '@platform/deprecations';
import { createGateway } from '../app';
import { loadGatewayConfig } from '../config';

const JWT_SECRET = 'gateway-usage-test-secret-0123456789abcdef';
const today = new Date().toISOString().slice(0, 10);
const rating = { productId: 'p1', average: 4.5, count: 2, distribution: { '1': 0, '2': 0, '3': 0, '4': 1, '5': 1 } };
const registry: Deprecation[] = [
  { element: 'rest:GET /v1/products/{id}/rating response.200.body.count', replacement: 'rest:GET /v1/products/{id}/rating response.200.body.distribution', announced: '2026-01-01', sunset: '2099-01-01', notice: 'https://docs.example.com/changes/rating-count', brownouts: [] },
  { element: 'graphql:Product.imageUrl', replacement: 'graphql:Product.images', announced: '2026-01-01', sunset: '2099-01-01', notice: 'https://docs.example.com/changes/image-url', brownouts: [] },
];

let upstream: Listening;
let gateway: Listening;
let recorder: UsageRecorder;
let stopGateway: () => Promise<void>;
const seenByService: string[] = [];
/** Issued API keys the fake users-service vouches for, by key text. */
const issuedKeys = new Map<string, { id: string; ownerId: string }>();
/** Tokens the fake users-service answers as an admin's. */
const adminTokens = new Set<string>();

beforeAll(async () => {
  const service = express();
  service.get('/internal/credentials/:id', (req, res) => void res.json({ userId: req.params.id, exists: true, credentialVersion: 1 }));
  // As users-service vouches for an issued key: its id, owner and scopes.
  service.post('/internal/api-key-verifications', express.json(), (req, res) => {
    const key = issuedKeys.get(req.body.key);
    res.json(key ? { valid: true, id: key.id, ownerId: key.ownerId, role: 'customer', credentialVersion: 1, scopes: ['products:read'], expiresAt: null } : { valid: false, reason: 'unknown' });
  });
  service.get('/products/:id/rating', (req, res) => {
    seenByService.push(req.originalUrl);
    res.json(rating);
  });
  service.post('/orders', express.json(), (_req, res) => void res.status(201).json({ id: 'o1' }));
  service.get('/products', (req, res) => {
    seenByService.push(req.originalUrl);
    res.json({ items: [{ id: 'p1', name: 'Lamp', price: 1200 }], nextCursor: null, hasNext: false });
  });
  service.get('/users/:id', (req, res) => {
    // As users-service answers an admin: any user; anyone else, only themselves.
    const admin = /^Bearer /.test(req.headers.authorization ?? '') && adminTokens.has((req.headers.authorization ?? '').slice(7));
    if (!admin) return void res.status(404).json({ code: 'NOT_FOUND' });
    res.json({ id: req.params.id, email: `${req.params.id}@example.com` });
  });
  service.get('/orders/:id', (req, res) => {
    seenByService.push(req.originalUrl);
    res.json({ id: req.params.id, status: 'PENDING' });
  });
  upstream = await listen(service, 0, '127.0.0.1');
  recorder = new UsageRecorder(openStore(), { registry: new Registry() });
  ({ gateway, stop: stopGateway } = await startGateway(recorder));
});

afterAll(async () => {
  await stopGateway();
  await upstream.server.close();
});

/** An empty store as deployed: Redis (TEST_REDIS_URL, under a prefix of its own) or files. */
const openStore = () => (process.env.TEST_REDIS_URL ? RedisUsageStore.connect(process.env.TEST_REDIS_URL, `usage:test:${randomUUID()}`) : new FileUsageStore(mkdtempSync(path.join(tmpdir(), 'gateway-usage-'))));

/** A gateway in front of the fake services, recording into `usage`'s store. */
async function startGateway(usage: UsageRecorder): Promise<{ gateway: Listening; stop: () => Promise<void> }> {
  const url = `http://127.0.0.1:${upstream.port}`;
  const logger = pino({ level: 'silent' }, new Writable({ write: (_chunk, _enc, done) => done() }));
  const metrics = createMetrics('gateway-usage-test');
  const config = {
    ...loadGatewayConfig({ NODE_ENV: 'test', JWT_SECRET, RATE_LIMIT_POINTS: '10000', RATE_LIMIT_WINDOW_S: '60', RATE_LIMIT_TOKENS_POINTS: '100', RATE_LIMIT_TOKENS_IP_POINTS: '100', CREDENTIALS_CACHE_MS: '60000', API_KEYS_CACHE_MS: '0' }),
    USERS_URL: url,
    ORDERS_URL: url,
    CATALOG_URL: url,
    INVENTORY_URL: url,
    TRUST_PROXY: ['loopback'],
    DEPRECATIONS_FILE: { file: 'test', entries: registry },
  };
  const built = await createGateway(
    config,
    { logger, health: new Health(), metrics },
    { supergraphPath: path.join(__dirname, '../graphql/supergraph.graphql'), openapiPath: path.join(__dirname, '../openapi/openapi.json'), trustedDocumentsPath: path.join(__dirname, '../graphql/trusted-documents.json') },
    { usage },
  );
  const listening = await listen(built.app, 0, '127.0.0.1');
  return {
    gateway: listening,
    // The gateway's resources include the recorder: stopping them flushes it and closes its store.
    stop: async () => {
      await listening.server.close();
      for (const close of built.resources) await close();
    },
  };
}

const get = (pathAndQuery: string, headers: Record<string, string> = {}) => fetch(`http://127.0.0.1:${gateway.port}${pathAndQuery}`, { headers });
const usesOf = async (caller: string) => {
  await recorder.flush();
  return usageByCaller(recorder.store, { today, wanted: () => true, caller });
};

describe('fields', () => {
  it('answers the whole representation, keeps `fields` from the service, and records only the fields named', async () => {
    const { token, userId } = await tokenFor(JWT_SECRET);
    const answer = await get('/v1/products/p1/rating?fields=productId,distribution', { authorization: `Bearer ${token}`, 'x-client-name': 'shop-app', 'x-client-version': '3.2.0' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual(rating);
    expect(seenByService.at(-1)).toBe('/products/p1/rating');

    const uses = await usesOf(`user:${userId}`);
    expect(uses.map((use) => use.element).sort()).toEqual([
      'rest:GET /v1/products/{id}/rating',
      'rest:GET /v1/products/{id}/rating response.200.body.distribution',
      'rest:GET /v1/products/{id}/rating response.200.body.productId',
    ]);
    expect(uses[0]).toMatchObject({ client: 'shop-app/3.2.0', calls1d: 1 });
  });

  it('keeps the other parameters as they came when it strips `fields`', async () => {
    const { token } = await tokenFor(JWT_SECRET);
    const answer = await get('/v1/orders/o1?include=amountDetail&fields=id,status', { authorization: `Bearer ${token}` });
    expect({ status: answer.status, body: await answer.json() }).toEqual({ status: 200, body: { id: 'o1', status: 'PENDING' } });
    expect(seenByService.at(-1)).toBe('/orders/o1?include=amountDetail');
  });

  it('adds up `fields` given twice, as a client sending an array one name per parameter does', async () => {
    const { token, userId } = await tokenFor(JWT_SECRET);
    const answer = await get('/v1/products/p1/rating?fields=productId&fields=distribution', { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    expect(seenByService.at(-1)).toBe('/products/p1/rating');
    expect((await usesOf(`user:${userId}`)).map((use) => use.element).filter((element) => element.includes('response.')).sort()).toEqual([
      'rest:GET /v1/products/{id}/rating response.200.body.distribution',
      'rest:GET /v1/products/{id}/rating response.200.body.productId',
    ]);
    expect((await get('/v1/products/p1/rating?fields=productId&fields=colour', { authorization: `Bearer ${token}` })).status).toBe(400);
  });

  it('takes the fields of each item for a list, and records them per item', async () => {
    const { token, userId } = await tokenFor(JWT_SECRET);
    expect((await get('/v1/products?size=1&fields=name', { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await usesOf(`user:${userId}`)).map((use) => use.element).sort()).toEqual([
      'rest:GET /v1/products',
      'rest:GET /v1/products query.size',
      // The paging envelope is read whatever `fields` names.
      'rest:GET /v1/products response.200.body.hasNext',
      'rest:GET /v1/products response.200.body.items[].name',
      'rest:GET /v1/products response.200.body.nextCursor',
      'rest:GET /v1/products response.200.body.totalCount',
    ]);
    expect((await get('/v1/products?fields=hasNext', { authorization: `Bearer ${token}` })).status).toBe(400);
  });

  it('counts every field of the answer as used when the client names none', async () => {
    const { token, userId } = await tokenFor(JWT_SECRET);
    expect((await get('/v1/products/p1/rating', { authorization: `Bearer ${token}` })).status).toBe(200);
    const elements = (await usesOf(`user:${userId}`)).map((use) => use.element);
    for (const field of Object.keys(rating)) expect(elements).toContain(`rest:GET /v1/products/{id}/rating response.200.body.${field}`);
    // The whole answer, nested fields too (`distribution.5`): what the gate counts as their use.
    expect(elements).toContain('rest:GET /v1/products/{id}/rating response.200');
  });

  it('counts a HEAD as a call of the operation, never as reading the fields of an answer it has no body of', async () => {
    // A monitor that checks a URL with HEAD reads no field: were it counted as reading `count`, it
    // would keep that field "in use" in the removal gate forever. Its answer still has the headers
    // of its GET (RFC 9110 §9.3.2): they say what the GET's answer holds.
    const { token, userId } = await tokenFor(JWT_SECRET);
    const head = await fetch(`http://127.0.0.1:${gateway.port}/v1/products/p1/rating`, { method: 'HEAD', headers: { authorization: `Bearer ${token}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get('deprecated-fields')).toBe('count');
    expect(head.headers.get('sunset')).toBe('Thu, 01 Jan 2099 00:00:00 GMT');
    expect(head.headers.get('link')).toBe('<https://docs.example.com/changes/rating-count>; rel="deprecation"; type="text/html"');
    expect(head.headers.get('deprecation')).toBe(`@${Date.parse('2026-01-01T00:00:00Z') / 1000}`);
    const elements = (await usesOf(`user:${userId}`)).map((use) => use.element);
    expect(elements).toEqual(['rest:GET /v1/products/{id}/rating']);
  });

  it('counts a GraphQL HEAD as a call of its root fields with the arguments it sent, never as reading the fields selected beneath', async () => {
    // The same document over GET reads the answer: every field selected counts.
    const query = `/v1/graphql?query=${encodeURIComponent('{ orders(first: 2) { id user { name } } }')}`;
    const selected = ['graphql:Order.id', 'graphql:Order.user', 'graphql:Query.orders', 'graphql:Query.orders.first', 'graphql:User.name'];
    const reader = await tokenFor(JWT_SECRET);
    expect((await get(query, { authorization: `Bearer ${reader.token}`, accept: 'application/json' })).status).toBe(200);
    expect((await usesOf(`user:${reader.userId}`)).map((use) => use.element).sort()).toEqual(selected);
    // A HEAD has no body: the operation (its root field) and what it sent, as a REST HEAD.
    const monitor = await tokenFor(JWT_SECRET);
    const head = await fetch(`http://127.0.0.1:${gateway.port}${query}`, { method: 'HEAD', headers: { authorization: `Bearer ${monitor.token}`, accept: 'application/json' } });
    expect([head.status, await head.text()]).toEqual([200, '']);
    expect((await usesOf(`user:${monitor.userId}`)).map((use) => use.element).sort()).toEqual(['graphql:Query.orders', 'graphql:Query.orders.first']);
  });

  it('records the header parameters a request sends', async () => {
    const { token, userId } = await tokenFor(JWT_SECRET);
    await fetch(`http://127.0.0.1:${gateway.port}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'k-1' },
      body: JSON.stringify({ items: [{ productId: 'p1', quantity: 1 }] }),
    });
    const elements = (await usesOf(`user:${userId}`)).map((use) => use.element);
    expect(elements).toContain('rest:POST /v1/orders header.Idempotency-Key');
    expect(elements).toContain('rest:POST /v1/orders response.201');
  });

  it('refuses a name the answer does not have: 400 VALIDATION_FAILED naming it, before any service is asked', async () => {
    const { token } = await tokenFor(JWT_SECRET);
    const before = seenByService.length;
    const answer = await get('/v1/products/p1/rating?fields=productId,colour', { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(400);
    const body = (await answer.json()) as { code: string; errors: { field: string; code: string; message: string }[] };
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(body.errors).toEqual([{ field: 'fields', code: 'NOT_ALLOWED', message: expect.stringContaining('"colour"') }]);
    expect((await get('/v1/products/p1/rating?fields=productId,,average', { authorization: `Bearer ${token}` })).status).toBe(400);
    expect(seenByService.length).toBe(before);
  });

  it('reads `fields=` (sent empty) as not sent: the answer counts whole, and an empty parameter is no use of it', async () => {
    const { token, userId } = await tokenFor(JWT_SECRET);
    const answer = await get('/v1/products?fields=&size=', { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    expect(seenByService.at(-1)).toBe('/products?size=');
    const elements = (await usesOf(`user:${userId}`)).map((use) => use.element);
    expect(elements).toContain('rest:GET /v1/products response.200.body.items[].name');
    expect(elements).not.toContain('rest:GET /v1/products query.size');
  });
});

describe('caller identity', () => {
  it('names a caller without a token by its client headers, else its User-Agent, else unidentified; a malformed header is not believed', async () => {
    // Sign-up is public: a caller without a token reaches recording.
    const signUp = (headers: Record<string, string>) => fetch(`http://127.0.0.1:${gateway.port}/v1/users`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"email":"a@example.com"}' });
    await signUp({ 'x-client-name': 'kiosk', 'x-client-version': '1.0.0' });
    expect((await usesOf('client:kiosk/1.0.0')).map((use) => use.element)).toEqual(expect.arrayContaining(['rest:POST /v1/users', 'rest:POST /v1/users request.body.email']));
    await signUp({ 'user-agent': 'partner-sync/7.1 (linux)' });
    expect((await usesOf('client:partner-sync/7.1')).length).toBeGreaterThan(0);
    await signUp({ 'x-client-name': 'bad name!', 'user-agent': 'curl' });
    expect((await usesOf('unidentified')).length).toBeGreaterThan(0);
  });

  it('records an issued API key as key:<id>, with its owner beside it', async () => {
    const id = newId();
    const ownerId = newId();
    const text = newApiKeyText(id);
    issuedKeys.set(text, { id, ownerId });
    const answer = await get('/v1/products/p1/rating', { 'x-api-key': text, 'x-client-name': 'partner-sync', 'x-client-version': '2.0.1' });
    expect(answer.status).toBe(200);
    const uses = await usesOf(`key:${id}`);
    expect(uses.map((use) => use.element)).toContain('rest:GET /v1/products/{id}/rating');
    expect(uses.every((use) => use.owner === `user:${ownerId}` && use.client === 'partner-sync/2.0.1')).toBe(true);
  });
});

describe('request body fields', () => {
  it('records nested request body paths the schema declares, and ignores names it does not', async () => {
    const { token, userId } = await tokenFor(JWT_SECRET);
    await fetch(`http://127.0.0.1:${gateway.port}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ productId: 'p1', quantity: 2 }], invented: true }),
    });
    const elements = (await usesOf(`user:${userId}`)).map((use) => use.element);
    expect(elements).toEqual(expect.arrayContaining(['rest:POST /v1/orders', 'rest:POST /v1/orders request.body.items', 'rest:POST /v1/orders request.body.items[]', 'rest:POST /v1/orders request.body.items[].quantity', 'rest:POST /v1/orders request.body.items[].productId']));
    expect(elements.some((element) => element.includes('invented'))).toBe(false);
  });
});

describe('GET /v1/deprecations and /v1/me/deprecations', () => {
  it('lists each registry entry with its callers for an admin, refuses a customer, and shows a caller its own use', async () => {
    const user = await tokenFor(JWT_SECRET);
    const other = await tokenFor(JWT_SECRET);
    await get('/v1/products/p1/rating', { authorization: `Bearer ${user.token}`, 'x-client-name': 'shop-app', 'x-client-version': '3.1.0' });
    await get('/v1/products/p1/rating?fields=distribution', { authorization: `Bearer ${other.token}` });
    await recorder.flush();

    const admin = await tokenFor(JWT_SECRET, 'admin');
    adminTokens.add(admin.token);
    const report = await get('/v1/deprecations', { authorization: `Bearer ${admin.token}` });
    expect(report.status).toBe(200);
    const { items } = (await report.json()) as { items: { element: string; sunset: string; callers: { caller: string; client: string; calls1d: number; calls7d: number; calls30d: number; lastSeen: string }[] }[] };
    expect(items.map((item) => item.element)).toEqual(registry.map((entry) => entry.element));
    const count = items[0];
    expect(count.sunset).toBe('2099-01-01');
    expect(count.callers).toContainEqual(expect.objectContaining({ caller: `user:${user.userId}`, client: 'shop-app/3.1.0', contact: `${user.userId}@example.com`, calls1d: 1, calls7d: 1, calls30d: 1 }));
    expect(count.callers.some((caller) => caller.caller === `user:${other.userId}`)).toBe(false);

    expect((await get('/v1/deprecations', { authorization: `Bearer ${user.token}` })).status).toBe(403);
    // Who may call it before what was sent, as on the services' admin routes: a parameter it does not take does not tell a customer more.
    expect((await get('/v1/deprecations?size=5', { authorization: `Bearer ${user.token}` })).status).toBe(403);
    const mine = (await (await get('/v1/me/deprecations', { authorization: `Bearer ${user.token}` })).json()) as { items: { element: string; callers: { caller: string; contact: string | null }[] }[] };
    expect(mine.items.map((item) => item.element)).toEqual([registry[0].element]);
    expect(mine.items[0].callers.every((caller) => caller.caller === `user:${user.userId}`)).toBe(true);
    expect(mine.items[0].callers.every((caller) => caller.contact === null)).toBe(true);
    const others = (await (await get('/v1/me/deprecations', { authorization: `Bearer ${other.token}` })).json()) as { items: unknown[] };
    expect(others.items).toEqual([]);

    // No paging or filter: a parameter it does not take is refused, as on every route; `fields` is the gateway's own.
    for (const [route, token] of [['/v1/deprecations?size=5', admin.token], ['/v1/me/deprecations?x=1', user.token]]) {
      const refused = await get(route, { authorization: `Bearer ${token}` });
      expect([refused.status, ((await refused.json()) as { errors: { code: string }[] }).errors[0].code]).toEqual([400, 'UNKNOWN_PARAMETER']);
    }
    expect((await get('/v1/me/deprecations?fields=element,callers', { authorization: `Bearer ${user.token}` })).status).toBe(200);
  });

  it("shows a user the deprecated calls of their own API keys, and nobody else's keys", async () => {
    // Keys are for programs, the callers most likely to keep calling a deprecated element; a key
    // cannot read the report itself (keys are refused on it), so its owner is the one to tell.
    // Before, the owner's report named only `user:<id>` and the key's use showed to admins alone.
    const owner = await tokenFor(JWT_SECRET);
    const stranger = await tokenFor(JWT_SECRET);
    const id = newId();
    const text = newApiKeyText(id);
    issuedKeys.set(text, { id, ownerId: owner.userId });
    expect((await get('/v1/products/p1/rating', { 'x-api-key': text, 'x-client-name': 'nightly-export', 'x-client-version': '1.0.0' })).status).toBe(200);
    await recorder.flush();

    const mine = (await (await get('/v1/me/deprecations', { authorization: `Bearer ${owner.token}` })).json()) as { items: { element: string; callers: { caller: string; owner: string | null; client: string }[] }[] };
    expect(mine.items.map((item) => item.element)).toEqual([registry[0].element]);
    expect(mine.items[0].callers).toContainEqual(expect.objectContaining({ caller: `key:${id}`, owner: `user:${owner.userId}`, client: 'nightly-export/1.0.0' }));
    const theirs = (await (await get('/v1/me/deprecations', { authorization: `Bearer ${stranger.token}` })).json()) as { items: unknown[] };
    expect(theirs.items).toEqual([]);
  });
});

describe('concurrent reports', () => {
  it('read the older 28 days once between them, whatever the number of GET /v1/me/deprecations in flight', async () => {
    // A gateway that has answered no report yet, so nothing is kept.
    const fresh = new UsageRecorder(openStore(), { registry: new Registry() });
    const { gateway: other, stop } = await startGateway(fresh);
    const read = jest.spyOn(fresh.store, 'read');
    try {
      const user = await tokenFor(JWT_SECRET);
      const ask = (route: string) => fetch(`http://127.0.0.1:${other.port}${route}`, { headers: { authorization: `Bearer ${user.token}` } });
      await ask('/v1/products/p1/rating');
      await fresh.flush();
      const answers = await Promise.all(Array.from({ length: 12 }, () => ask('/v1/me/deprecations')));
      expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
      const bodies = (await Promise.all(answers.map((answer) => answer.json()))) as { items: { callers: { caller: string }[] }[] }[];
      for (const body of bodies) expect(body.items[0].callers.every((caller) => caller.caller === `user:${user.userId}`)).toBe(true);
      const daysRead = read.mock.calls.map(([from, to]) => (Date.parse(to) - Date.parse(from)) / 86_400_000 + 1);
      // The 28 older days once, and at most yesterday and today per report: 12 whole reads would be 360 days.
      expect(daysRead.filter((days) => days === 28)).toHaveLength(1);
      expect(daysRead.reduce((sum, days) => sum + days, 0)).toBeLessThanOrEqual(28 + 2 * 12);
    } finally {
      read.mockRestore();
      await stop();
    }
  });
});

describe('repeated reports', () => {
  it('read yesterday and today of the store, not thirty days, once the older days are kept', async () => {
    const user = await tokenFor(JWT_SECRET);
    await get('/v1/products/p1/rating', { authorization: `Bearer ${user.token}` });
    await recorder.flush();
    expect((await get('/v1/me/deprecations', { authorization: `Bearer ${user.token}` })).status).toBe(200);
    const read = jest.spyOn(recorder.store, 'read');
    try {
      for (let report = 0; report < 5; report++) {
        const answer = await get('/v1/me/deprecations', { authorization: `Bearer ${user.token}` });
        expect(answer.status).toBe(200);
        const { callers } = ((await answer.json()) as { items: { callers: { caller: string; calls1d: number }[] }[] }).items[0];
        expect(callers.length).toBeGreaterThan(0);
        expect(callers.every((caller) => caller.caller === `user:${user.userId}` && caller.calls1d === 1)).toBe(true);
      }
      const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
      expect(read.mock.calls).toEqual(Array(5).fill([yesterday, today]));
    } finally {
      read.mockRestore();
    }
  });
});

describe('the usage store down', () => {
  it('answers GET /v1/deprecations and /v1/me/deprecations 503 with Retry-After in the error format, and still answers the API', async () => {
    // Redis where nothing listens: every read of the store fails.
    const down = new UsageRecorder(RedisUsageStore.connect(`redis://127.0.0.1:${await freePort()}`, 'usage:test:down'), { registry: new Registry() });
    const { gateway: other, stop } = await startGateway(down);
    try {
      const admin = await tokenFor(JWT_SECRET, 'admin');
      const user = await tokenFor(JWT_SECRET);
      for (const [route, token] of [['/v1/deprecations', admin.token], ['/v1/me/deprecations', user.token]]) {
        const answer = await fetch(`http://127.0.0.1:${other.port}${route}`, { headers: { authorization: `Bearer ${token}` } });
        expect({ route, status: answer.status, retryAfter: answer.headers.get('retry-after') }).toEqual({ route, status: 503, retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
        expect(await answer.json()).toEqual({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('retry'), traceId: expect.any(String), errors: [] });
      }
      // A customer is still refused first: the store is not asked for a report they may not see.
      expect((await fetch(`http://127.0.0.1:${other.port}/v1/deprecations`, { headers: { authorization: `Bearer ${user.token}` } })).status).toBe(403);
      // Recording never waits on the store: the API answers as before.
      expect((await fetch(`http://127.0.0.1:${other.port}/v1/products/p1/rating`, { headers: { authorization: `Bearer ${user.token}` } })).status).toBe(200);
    } finally {
      await stop();
    }
  });
});

describe('Prometheus', () => {
  it('keeps the usage series at a fixed number with 10,000 distinct clients', async () => {
    const registryOfMetrics = new Registry();
    const bounded = new UsageRecorder(new FileUsageStore(mkdtempSync(path.join(tmpdir(), 'gateway-usage-'))), { registry: registryOfMetrics });
    for (let index = 0; index < 10_000; index++) bounded.record({ caller: `client:app-${index}/1.0`, client: `app-${index}/1.0` }, ['rest:GET /v1/orders']);
    await bounded.flush();
    const series = (await registryOfMetrics.getMetricsAsJSON()).reduce((sum, metric) => sum + metric.values.length, 0);
    expect(series).toBe(USAGE_METRIC_SERIES);
  });
});
