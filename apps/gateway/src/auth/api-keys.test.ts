// Issued API keys at the gateway, as a client sees them: the services are real HTTP servers on
// loopback standing in for users-service (its key verification and credential check) and the
// others, and, for the revocation push, a redis-server of the test's own.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import express from 'express';
import { buildASTSchema, parse } from 'graphql';
import pino from 'pino';
import { newApiKeyText, publishRevocation, TokenVerifier } from '@platform/auth';
import { newId } from '@platform/ids';
import { createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { apiClient, rateLimitField, RedisServer, tokenFor } from '@platform/test-kit';
import { Redis } from 'ioredis';
import { createGateway } from '../app';
import { loadGatewayConfig } from '../config';
import { graphqlRootResources } from './api-keys';

const JWT_SECRET = 'api-keys-gateway-secret-api-keys-gateway-0';
const generated = (file: string) => path.join(__dirname, '..', file);

interface KeyAnswer {
  valid: boolean;
  reason?: string;
  id?: string;
  ownerId?: string;
  role?: string;
  credentialVersion?: number;
  scopes?: string[];
  expiresAt?: string | null;
}

/** users-service's answers, by key text, as the fake serves them. */
const keyAnswers = new Map<string, KeyAnswer>();
const credentialVersions = new Map<string, number | null>();
let verificationsAsked = 0;
/** What the last proxied request carried to the service. */
let lastForwarded: Record<string, string | string[] | undefined> = {};

function fakeServices() {
  const app = express();
  app.use(express.json());
  app.post('/internal/api-key-verifications', (req, res) => {
    verificationsAsked += 1;
    res.json(keyAnswers.get(req.body.key) ?? { valid: false, reason: 'unknown' });
  });
  app.get('/internal/credentials/:id', (req, res) => {
    const version = credentialVersions.has(req.params.id) ? credentialVersions.get(req.params.id) : 1;
    res.json({ userId: req.params.id, exists: version !== null, credentialVersion: version });
  });
  const echo = (req: express.Request, res: express.Response) => {
    lastForwarded = req.headers;
    res.json({ items: [], nextCursor: null, hasNext: false });
  };
  app.get('/orders', echo);
  app.post('/orders', echo);
  app.post('/orders/search', echo);
  app.get('/products', echo);
  app.get('/api-keys', echo);
  app.patch('/users/:id', echo);
  app.get('/users/:id', echo);
  app.delete('/api-keys/:id', (_req, res) => void res.status(204).end());
  app.post('/api-keys/:id/rotation', (req, res) => void res.status(201).json({ id: newId(), rotatedFromId: req.params.id }));
  app.post('/tokens', echo);
  // The orders subgraph: every query gets one order.
  app.post('/graphql', (req, res) => {
    lastForwarded = req.headers;
    res.json({ data: { orders: [{ id: 'o1' }] } });
  });
  return app;
}

/** A key users-service would vouch for: its text, and the answer the fake gives for it. */
function issueKey(scopes: string[], options: { ownerId?: string; expiresAt?: string | null; role?: string } = {}) {
  const id = newId();
  const text = newApiKeyText(id);
  const ownerId = options.ownerId ?? newId();
  keyAnswers.set(text, { valid: true, id, ownerId, role: options.role ?? 'customer', credentialVersion: 1, scopes, expiresAt: options.expiresAt ?? null });
  return { id, text, ownerId };
}

interface Gateway {
  server: Listening;
  stop(): Promise<void>;
}

async function startGateway(usersUrl: string, options: { points?: number; cacheMs?: number; feedRedisUrl?: string } = {}): Promise<Gateway> {
  const logger = pino({ level: 'silent' });
  const metrics = createMetrics('api-keys-gateway-test');
  const cacheMs = String(options.cacheMs ?? 0);
  const config = {
    ...loadGatewayConfig({
      NODE_ENV: 'test',
      JWT_SECRET,
      ...(options.feedRedisUrl ? { REDIS_URL: options.feedRedisUrl } : {}),
      RATE_LIMIT_POINTS: String(options.points ?? 1000),
      RATE_LIMIT_WINDOW_S: '60',
      RATE_LIMIT_TOKENS_POINTS: '1000',
      RATE_LIMIT_TOKENS_IP_POINTS: '1000',
      CREDENTIALS_CACHE_MS: cacheMs,
      API_KEYS_CACHE_MS: cacheMs,
      CREDENTIALS_TIMEOUT_MS: '300',
      USAGE_RECORDING: 'off',
    }),
    USERS_URL: usersUrl,
    ORDERS_URL: usersUrl,
    CATALOG_URL: usersUrl,
    INVENTORY_URL: usersUrl,
  };
  const gateway = await createGateway(config, { logger, health: new Health(), metrics }, {
    supergraphPath: generated('graphql/supergraph.graphql'),
    openapiPath: generated('openapi/openapi.json'),
    trustedDocumentsPath: generated('graphql/trusted-documents.json'),
  });
  if (options.feedRedisUrl) expect(gateway.ready.revocationFeed).toBe(true);
  const server = await listen(gateway.app, 0, '127.0.0.1');
  return {
    server,
    stop: async () => {
      await server.close();
      for (const close of gateway.resources) await close();
    },
  };
}

let services: Listening;
let gateway: Gateway;
const call = apiClient(() => gateway.server.url);

beforeAll(async () => {
  services = await listen(fakeServices(), 0, '127.0.0.1');
  gateway = await startGateway(services.url);
});

afterAll(async () => {
  await gateway?.stop();
  await services?.close();
});

const expectRefused = (res: { status: number; body: { code: string; message: string; traceId: string; errors: unknown[] }; headers: Headers }, status: number, code: string) => {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ code, message: expect.any(String), traceId: expect.any(String), errors: [] });
};

describe('API keys at the gateway', () => {
  it('authenticate as Authorization: Bearer and as X-Api-Key; the service gets an access token for the owner, never the key', async () => {
    const key = issueKey(['orders:read']);
    const verifier = new TokenVerifier(JWT_SECRET);
    for (const headers of [{ authorization: `Bearer ${key.text}` }, { 'x-api-key': key.text }] as Record<string, string>[]) {
      lastForwarded = {};
      const res = await call('GET', '/v1/orders', { headers });
      expect(res.status).toBe(200);
      expect(JSON.stringify(lastForwarded)).not.toContain(key.text);
      expect(lastForwarded['x-api-key']).toBeUndefined();
      await expect(verifier.verifyHeader(String(lastForwarded.authorization))).resolves.toMatchObject({ userId: key.ownerId, role: 'customer' });
    }
  });

  it('refuse a malformed key or a wrong checksum with 401 without asking users-service', async () => {
    const key = issueKey(['orders:read']);
    const typo = key.text.slice(0, 20) + (key.text[20] === 'a' ? 'b' : 'a') + key.text.slice(21);
    const asked = verificationsAsked;
    for (const bad of [typo, key.text.slice(0, -1), `${key.text}x`, 'opk_', 'opk_0123_abc']) {
      for (const headers of [{ authorization: `Bearer ${bad}` }, { 'x-api-key': bad }] as Record<string, string>[]) {
        const res = await call('GET', '/v1/orders', { headers });
        expectRefused(res, 401, 'UNAUTHENTICATED');
        expect(res.body.message).toMatch(/malformed/);
        expect(res.headers.get('www-authenticate')).toBe('Bearer');
      }
    }
    expect(verificationsAsked).toBe(asked);
  });

  it('refuse unknown, revoked and expired keys with 401, and a key beside a token', async () => {
    const unknown = newApiKeyText(newId()); // well-formed, checksum right: only users-service can tell
    expectRefused(await call('GET', '/v1/orders', { headers: { 'x-api-key': unknown } }), 401, 'UNAUTHENTICATED');
    const revoked = issueKey(['orders:read']);
    keyAnswers.set(revoked.text, { valid: false, reason: 'revoked' });
    const refused = await call('GET', '/v1/orders', { headers: { 'x-api-key': revoked.text } });
    expectRefused(refused, 401, 'UNAUTHENTICATED');
    expect(refused.body.message).toBe('The API key was revoked.');
    const expired = issueKey(['orders:read']);
    keyAnswers.set(expired.text, { valid: false, reason: 'expired' });
    expect((await call('GET', '/v1/orders', { headers: { 'x-api-key': expired.text } })).body.message).toBe('The API key has expired.');
    const good = issueKey(['orders:read']);
    const { token } = await tokenFor(JWT_SECRET);
    const both = await call('GET', '/v1/orders', { token, headers: { 'x-api-key': good.text } });
    expectRefused(both, 401, 'UNAUTHENTICATED');
    expect(both.body.message).toMatch(/one credential/);
  });

  it('stop a key at its expiry even while its answer is cached (the end of a rotation overlap)', async () => {
    const cached = await startGateway(services.url, { cacheMs: 60_000 });
    try {
      const key = issueKey(['orders:read'], { expiresAt: new Date(Date.now() + 1_000).toISOString() });
      const viaCached = apiClient(() => cached.server.url);
      expect((await viaCached('GET', '/v1/orders', { headers: { 'x-api-key': key.text } })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const res = await viaCached('GET', '/v1/orders', { headers: { 'x-api-key': key.text } });
      expectRefused(res, 401, 'UNAUTHENTICATED');
      expect(res.body.message).toBe('The API key has expired.');
    } finally {
      await cached.stop();
    }
  });

  it("carry the owner's permissions narrowed by scopes: 403 FORBIDDEN for a route or GraphQL field outside them", async () => {
    const reader = issueKey(['orders:read']);
    const headers = { 'x-api-key': reader.text };
    expect((await call('GET', '/v1/orders', { headers })).status).toBe(200);
    expect((await call('POST', '/v1/orders/search', { headers, body: {} })).status).toBe(200); // a search reads
    for (const [method, route] of [['POST', '/v1/orders'], ['GET', '/v1/products'], ['GET', '/v1/api-keys']] as const) {
      const res = await call(method, route, { headers, ...(method === 'POST' ? { body: {} } : {}) });
      expectRefused(res, 403, 'FORBIDDEN');
    }
    expect((await call('POST', '/v1/orders', { headers, body: {} })).body.message).toBe('This API key lacks the scope orders:write.');
    expect((await call('GET', '/v1/products', { headers })).body.message).toBe('This API key lacks the scope products:read.');
    // Keys cannot manage keys, whatever their scopes.
    const everything = issueKey(['users:read', 'users:write', 'orders:read', 'orders:write', 'products:read', 'products:write', 'inventory:read', 'inventory:write']);
    expectRefused(await call('GET', '/v1/api-keys', { headers: { 'x-api-key': everything.text } }), 403, 'FORBIDDEN');
    // Public routes need no scope.
    expect((await call('POST', '/v1/tokens', { headers, body: { email: 'a@example.com', password: 'x' } })).status).toBe(200);

    const graphql = (query: string) => call('POST', '/v1/graphql', { headers, body: { query } });
    const allowed = await graphql('{ orders(first: 1) { id } }');
    expect(allowed.status).toBe(200);
    expect(allowed.body.data).toEqual({ orders: [{ id: 'o1' }] });
    expect(JSON.stringify(lastForwarded)).not.toContain(reader.text);
    expectRefused(await graphql('{ me { id } }'), 403, 'FORBIDDEN');
    // A user's data is the users resource wherever it is selected: an order's user by id and name
    // only, without users:read (before, orders:read read every customer's email, phone and address).
    expect((await graphql('{ orders(first: 1) { id user { id } } }')).status).toBe(200);
    for (const query of ['{ orders(first: 1) { user { email } } }', '{ order(id: "o1") { ...U } } fragment U on Order { user { address { line1 } } }']) {
      const refused = await graphql(query);
      expectRefused(refused, 403, 'FORBIDDEN');
      expect(refused.body.message).toBe('This API key lacks the scope users:read.');
    }
    expectRefused(await graphql('query { ...F } fragment F on Query { orders { id } product(id: "x") { id } }'), 403, 'FORBIDDEN');
    const mutation = await graphql('mutation { cancelOrder(id: "x") { id } }');
    expectRefused(mutation, 403, 'FORBIDDEN');
    expect(mutation.body.message).toBe('This API key lacks the scope orders:write.');
  });

  it('let a users:write key read back the user updateMe returns, as PATCH /v1/users/me answers it; beside another resource, a user\'s fields still need users:read', async () => {
    const writer = issueKey(['users:write']);
    const headers = { 'x-api-key': writer.text };
    expect((await call('PATCH', '/v1/users/me', { headers, body: { nickname: 'bot' } })).status).toBe(200);
    const updated = await call('POST', '/v1/graphql', { headers, body: { query: 'mutation { updateMe(input: { nickname: "bot" }) { id nickname email } }' } });
    expect(updated.status).toBe(200);
    const both = issueKey(['users:write', 'orders:write']);
    const mixed = await call('POST', '/v1/graphql', { headers: { 'x-api-key': both.text }, body: { query: 'mutation { updateMe(input: { nickname: "bot" }) { id } cancelOrder(id: "x") { user { email } } }' } });
    expectRefused(mixed, 403, 'FORBIDDEN');
    expect(mixed.body.message).toBe('This API key lacks the scope users:read.');
  });

  it('cannot take over the owner\'s account: no password change, no deletion, whatever the scopes', async () => {
    const key = issueKey(['users:read', 'users:write']);
    const headers = { 'x-api-key': key.text };
    expect((await call('GET', '/v1/users/me', { headers })).status).toBe(200);
    expect((await call('PATCH', '/v1/users/me', { headers, body: { nickname: 'bot' } })).status).toBe(200);
    for (const body of [{ password: 'taken-over-1' }, '{"pass\\u0077ord": "taken-over-1"}']) {
      const res = await call('PATCH', '/v1/users/me', { headers, body });
      expectRefused(res, 403, 'FORBIDDEN');
      expect(res.body.message).toMatch(/cannot change its owner's password/);
    }
    expectRefused(await call('DELETE', `/v1/users/${key.ownerId}`, { headers }), 403, 'FORBIDDEN');
  });

  it("cannot change the owner's password by sending the body in another charset or behind a byte-order mark, which the service reads", async () => {
    const key = issueKey(['users:read', 'users:write']);
    const json = JSON.stringify({ password: 'taken-over-1' });
    const variants: [string, Buffer][] = [
      ['application/json; charset=utf-16le', Buffer.from(json, 'utf16le')],
      ['application/json; charset=UTF-16', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(json, 'utf16le')])],
      ['application/json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)])],
    ];
    for (const [contentType, body] of variants) {
      const res = await fetch(`${gateway.server.url}/v1/users/me`, { method: 'PATCH', headers: { 'x-api-key': key.text, 'content-type': contentType }, body });
      expect({ contentType, status: res.status, message: ((await res.json()) as { message: string }).message }).toEqual({ contentType, status: 403, message: expect.stringMatching(/cannot change its owner's password/) });
    }
    const nickname = Buffer.from(JSON.stringify({ nickname: 'bot' }), 'utf16le');
    expect((await fetch(`${gateway.server.url}/v1/users/me`, { method: 'PATCH', headers: { 'x-api-key': key.text, 'content-type': 'application/json; charset=utf-16le' }, body: nickname })).status).toBe(200);
    // A header the service's parser reads leniently (a trailing `;`) is read so here too, not refused as unreadable.
    const lenient = await fetch(`${gateway.server.url}/v1/users/me`, { method: 'PATCH', headers: { 'x-api-key': key.text, 'content-type': 'application/json; charset=utf-8;' }, body: JSON.stringify({ nickname: 'bot-2' }) });
    expect(lenient.status).toBe(200);
    // What the gateway cannot read in the charset named is refused, not left for the service to read another way.
    const unreadable = await fetch(`${gateway.server.url}/v1/users/me`, { method: 'PATCH', headers: { 'x-api-key': key.text, 'content-type': 'application/json; charset=utf-16be' }, body: Buffer.from(json, 'utf16le') });
    expect(unreadable.status).toBe(400);
    expect(((await unreadable.json()) as { code: string }).code).toBe('MALFORMED_JSON');
    // Refused as the service refuses it: a charset JSON is not sent in is 415, as with a token, not 400.
    const latin1 = await fetch(`${gateway.server.url}/v1/users/me`, { method: 'PATCH', headers: { 'x-api-key': key.text, 'content-type': 'application/json; charset=iso-8859-1' }, body: JSON.stringify({ nickname: 'bot-3' }) });
    expect([latin1.status, await latin1.json()]).toEqual([415, expect.objectContaining({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body charset is not supported; send UTF-8.' })]);
  });

  it('every root field of the supergraph has a resource, so none is refused or allowed by accident', () => {
    const sdl = readFileSync(generated('graphql/supergraph.graphql'), 'utf8');
    const schema = buildASTSchema(parse(sdl), { assumeValidSDL: true });
    const rootFields = [schema.getQueryType(), schema.getMutationType()].flatMap((type) => Object.keys(type?.getFields() ?? {}));
    expect(rootFields.filter((field) => !graphqlRootResources[field])).toEqual([]);
  });

  it("are rate-limited as their owner: the owner's keys and token spend one budget, so more keys bring no more calls", async () => {
    const limited = await startGateway(services.url, { points: 4 });
    try {
      const viaLimited = apiClient(() => limited.server.url);
      const ownerId = newId();
      const first = issueKey(['orders:read'], { ownerId });
      const second = issueKey(['orders:read'], { ownerId });
      const { token } = await tokenFor(JWT_SECRET, 'customer', ownerId);
      const statuses = [];
      for (let i = 0; i < 2; i++) statuses.push((await viaLimited('GET', '/v1/orders', { headers: { 'x-api-key': first.text } })).status);
      const other = await viaLimited('GET', '/v1/orders', { headers: { 'x-api-key': second.text } });
      expect(other.headers.get('ratelimit')).toEqual(rateLimitField('default', 1, 60));
      statuses.push(other.status, (await viaLimited('GET', '/v1/orders', { token })).status);
      statuses.push((await viaLimited('GET', '/v1/orders', { headers: { 'x-api-key': second.text } })).status, (await viaLimited('GET', '/v1/orders', { token })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
      // Another account's key has its own budget.
      expect((await viaLimited('GET', '/v1/orders', { headers: { 'x-api-key': issueKey(['orders:read']).text } })).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });

  it('answer 503 with Retry-After when users-service cannot say whether a key is valid (fail closed)', async () => {
    const key = issueKey(['orders:read']);
    const silent = await listen(express().post('/internal/api-key-verifications', () => undefined), 0, '127.0.0.1');
    const stranded = await startGateway(silent.url);
    try {
      const res = await apiClient(() => stranded.server.url)('GET', '/v1/orders', { headers: { 'x-api-key': key.text } });
      expectRefused(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers.get('retry-after')).toBe('1');
    } finally {
      await stranded.stop();
      await silent.close();
    }
  });

  it('stop on this gateway from the next request when revoked through it, without Redis (the embedded default)', async () => {
    const alone = await startGateway(services.url, { cacheMs: 60_000 });
    try {
      const viaAlone = apiClient(() => alone.server.url);
      const ownerId = newId();
      const { token } = await tokenFor(JWT_SECRET, 'customer', ownerId);
      const deleted = issueKey(['orders:read'], { ownerId });
      const rotatedNow = issueKey(['orders:read'], { ownerId });
      const rotatedLater = issueKey(['orders:read'], { ownerId });
      for (const key of [deleted, rotatedNow, rotatedLater]) expect((await viaAlone('GET', '/v1/orders', { headers: { 'x-api-key': key.text } })).status).toBe(200);
      // Ids in any case name the same key (users-service lowercases them): upper case must revoke it too.
      expect((await viaAlone('DELETE', `/v1/api-keys/${deleted.id.toUpperCase()}`, { token })).status).toBe(204);
      expect((await viaAlone('POST', `/v1/api-keys/${rotatedNow.id.toUpperCase()}/rotation`, { token, body: { overlapSeconds: 0 } })).status).toBe(201);
      expect((await viaAlone('POST', `/v1/api-keys/${rotatedLater.id}/rotation`, { token, body: { overlapSeconds: 3600 } })).status).toBe(201);
      // users-service's answer is still "valid" in this gateway's cache: only what passed through it tells.
      expectRefused(await viaAlone('GET', '/v1/orders', { headers: { 'x-api-key': deleted.text } }), 401, 'UNAUTHENTICATED');
      expectRefused(await viaAlone('GET', '/v1/orders', { headers: { 'x-api-key': rotatedNow.text } }), 401, 'UNAUTHENTICATED');
      expect((await viaAlone('GET', '/v1/orders', { headers: { 'x-api-key': rotatedLater.text } })).status).toBe(200);
    } finally {
      await alone.stop();
    }
  });

  it('stop on every gateway on the revocation push, long before the cache bound, and with their owner', async () => {
    const redis = await RedisServer.start();
    const publisher = new Redis(redis.url);
    // Answers trusted a minute: only the push can stop the key this soon.
    const gateways = await Promise.all([0, 1].map(() => startGateway(services.url, { cacheMs: 60_000, feedRedisUrl: redis.url })));
    try {
      const calls = gateways.map((one) => apiClient(() => one.server.url));
      const key = issueKey(['orders:read']);
      const orphan = issueKey(['orders:read']);
      for (const viaOne of calls) {
        expect((await viaOne('GET', '/v1/orders', { headers: { 'x-api-key': key.text } })).status).toBe(200);
        expect((await viaOne('GET', '/v1/orders', { headers: { 'x-api-key': orphan.text } })).status).toBe(200);
      }
      keyAnswers.set(key.text, { valid: false, reason: 'revoked' });
      credentialVersions.set(orphan.ownerId, null);
      await publishRevocation(publisher, { apiKeyId: key.id });
      await publishRevocation(publisher, { userId: orphan.ownerId, credentialVersion: null });
      const deadline = Date.now() + 3_000; // the push takes milliseconds; answers are trusted 60 s
      for (const viaOne of calls) {
        for (const text of [key.text, orphan.text]) {
          let status = 0;
          while (Date.now() < deadline && (status = (await viaOne('GET', '/v1/orders', { headers: { 'x-api-key': text } })).status) !== 401) await new Promise((resolve) => setTimeout(resolve, 20));
          expect(status).toBe(401);
        }
      }
    } finally {
      await Promise.all(gateways.map((one) => one.stop()));
      publisher.disconnect();
      await redis.stop();
    }
  });

  it('drop every key answer cached while the revocation feed was down once Redis is back, long before the cache bound', async () => {
    const redis = await RedisServer.start();
    const gateway = await startGateway(services.url, { cacheMs: 60_000, feedRedisUrl: redis.url });
    try {
      const viaOne = apiClient(() => gateway.server.url);
      const key = issueKey(['orders:read']);
      expect((await viaOne('GET', '/v1/orders', { headers: { 'x-api-key': key.text } })).status).toBe(200);
      await redis.kill();
      keyAnswers.set(key.text, { valid: false, reason: 'revoked' }); // revoked while no push could arrive
      expect((await viaOne('GET', '/v1/orders', { headers: { 'x-api-key': key.text } })).status).toBe(200); // cached, within the 60 s bound
      await redis.restart();
      let status = 0;
      const deadline = Date.now() + 10_000; // the feed reconnects within 2 s; the bound here is 60 s
      while (Date.now() < deadline && (status = (await viaOne('GET', '/v1/orders', { headers: { 'x-api-key': key.text } })).status) !== 401) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(status).toBe(401);
    } finally {
      await gateway.stop();
      await redis.stop();
    }
  });
});
