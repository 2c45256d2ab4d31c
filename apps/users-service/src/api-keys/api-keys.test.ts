// The api-keys resource as a client and the gateway see it: real HTTP against the real app on a
// real database (PostgreSQL when TEST_DATABASE_URL is set, PGlite otherwise).
import { createHmac } from 'node:crypto';
import path from 'node:path';
import { apiKeyIdOf, type ApiKeyRevocation, newApiKeyText, type Revocation, serviceTokenSource } from '@platform/auth';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { createLogger, createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { apiClient } from '@platform/test-kit';
import { createUsersApp } from '../app';
import { PrismaClient } from '../generated/prisma/client';
import { MAX_ACTIVE_KEYS_PER_USER } from './service';

const JWT_SECRET = 'api-keys-test-secret-api-keys-test-secret';
const HASH_SECRET = 'api-key-hash-secret-for-the-tests-0123456789';
let database: Database<PrismaClient>;
let server: Listening;
const call = apiClient(() => server.url);
const published: (Revocation | ApiKeyRevocation)[] = [];
const gatewayToken = serviceTokenSource(JWT_SECRET, 'gateway');

let seq = 0;
async function signUp() {
  seq += 1;
  const email = `keys${seq}-${Date.now()}@example.com`;
  const user = await call('POST', '/users', { body: { name: `Keys ${seq}`, email, password: 'correct-horse-1' } });
  const token = await call('POST', '/tokens', { body: { email, password: 'correct-horse-1' } });
  return { id: user.body.id as string, token: token.body.accessToken as string };
}

async function verify(key: string) {
  return call('POST', '/internal/api-key-verifications', { token: await gatewayToken(), body: { key } });
}

beforeAll(async () => {
  database = await openTestDatabase({ service: 'users', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  const built = await createUsersApp({
    config: { API_KEY_HASH_SECRET: HASH_SECRET, jwtSecret: JWT_SECRET, jwtVerifySecrets: [JWT_SECRET], cursorSecret: 'cursor-secret-for-tests', ACCESS_TOKEN_TTL_S: 600, REQUEST_TIMEOUT_MS: 10_000, NODE_ENV: 'test' },
    prisma: database.prisma,
    logger: createLogger('api-keys-test', 'silent'),
    health: new Health(),
    metrics: createMetrics('api-keys-test'),
    revocations: { publish: async (revocation) => void published.push(revocation) },
  });
  server = await listen(built.app, 0, '127.0.0.1');
});

afterAll(async () => {
  await server?.close();
  await database?.close();
});

describe('POST /api-keys', () => {
  it('answers the key once, with its prefix, id and checksum; only a keyed hash is stored', async () => {
    const owner = await signUp();
    const res = await call('POST', '/api-keys', { token: owner.token, body: { name: 'CI deploys', scopes: ['orders:read', 'orders:write'] } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/v1/api-keys/${res.body.id}`);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'CI deploys',
      scopes: ['orders:read', 'orders:write'],
      hint: `opk_…${res.body.key.slice(-4)}`,
      status: 'ACTIVE',
      createdAt: expect.stringMatching(/Z$/),
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
      rotatedFromId: null,
      key: expect.stringMatching(/^opk_[0-9a-f]{32}_[0-9A-Za-z]{38}$/),
    });
    expect(apiKeyIdOf(res.body.key)).toBe(res.body.id);
    const rows = await database.prisma.$queryRaw<Record<string, unknown>[]>`SELECT * FROM api_keys WHERE id = ${res.body.id}::uuid`;
    expect(rows).toHaveLength(1);
    expect(rows[0].key_hash).toBe(createHmac('sha256', HASH_SECRET).update(res.body.key).digest('hex'));
    // The key's secret part is nowhere in the row.
    expect(JSON.stringify(rows[0])).not.toContain(res.body.key.slice(37));
    // Never shown again.
    const read = await call('GET', `/api-keys/${res.body.id}`, { token: owner.token });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('key');
    expect(read.text).not.toContain(res.body.key.slice(37));
  });

  it('gives keys made within the same minute hints that tell them apart', async () => {
    // The hint was the key's first 12 characters: `opk_` and the first 8 hex digits of its UUIDv7 id,
    // which are the top bits of its creation time. Every key an account made within about 65 s
    // showed the same hint (an outside test: three keys, all `opk_01a22635`), so it told nothing
    // the id does not, and could not match a leaked key's text to its row at a glance.
    const owner = await signUp();
    const keys: { key: string; hint: string }[] = [];
    for (const name of ['deploys', 'exports', 'backups']) keys.push((await call('POST', '/api-keys', { token: owner.token, body: { name, scopes: ['orders:read'] } })).body);
    expect(new Set(keys.map((key) => key.hint)).size).toBe(3);
    for (const { key, hint } of keys) expect(hint).toBe(`opk_…${key.slice(-4)}`);
    const listed = await call('GET', '/api-keys', { token: owner.token });
    expect(listed.body.items.map((item: { hint: string }) => item.hint).sort()).toEqual(keys.map((key) => key.hint).sort());
  });

  it('refuses an unknown scope, an empty or repeated list, a past expiry and unknown fields, each field named', async () => {
    const owner = await signUp();
    const bad = await call('POST', '/api-keys', { token: owner.token, body: { name: '', scopes: ['orders:delete'], color: 'red' } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    expect(bad.body.errors.map((error: { field: string }) => error.field).sort()).toEqual(['color', 'name', 'scopes[0]']);
    expect((await call('POST', '/api-keys', { token: owner.token, body: { name: 'x', scopes: [] } })).status).toBe(422);
    expect((await call('POST', '/api-keys', { token: owner.token, body: { name: 'x', scopes: ['orders:read', 'orders:read'] } })).body.errors[0]).toMatchObject({ field: 'scopes' });
    const past = await call('POST', '/api-keys', { token: owner.token, body: { name: 'x', scopes: ['orders:read'], expiresAt: '2020-01-01T00:00:00Z' } });
    expect(past.status).toBe(422);
    expect(past.body.errors).toEqual([{ field: 'expiresAt', code: 'OUT_OF_RANGE', message: 'expiresAt must be in the future.' }]);
    expect((await call('POST', '/api-keys', { body: { name: 'x', scopes: ['orders:read'] } })).status).toBe(401);
  });

  it(`allows ${MAX_ACTIVE_KEYS_PER_USER} active keys per user; the next is 409 until one is revoked`, async () => {
    const owner = await signUp();
    const made = await Promise.all(Array.from({ length: MAX_ACTIVE_KEYS_PER_USER + 3 }, (_, i) => call('POST', '/api-keys', { token: owner.token, body: { name: `k${i}`, scopes: ['products:read'] } })));
    expect(made.filter((res) => res.status === 201)).toHaveLength(MAX_ACTIVE_KEYS_PER_USER);
    const refused = made.filter((res) => res.status !== 201);
    expect(refused.map((res) => [res.status, res.body.code])).toEqual(Array(3).fill([409, 'API_KEY_LIMIT_REACHED']));
    const first = made.find((res) => res.status === 201)!;
    expect((await call('DELETE', `/api-keys/${first.body.id}`, { token: owner.token })).status).toBe(204);
    expect((await call('POST', '/api-keys', { token: owner.token, body: { name: 'again', scopes: ['products:read'] } })).status).toBe(201);
  });
});

describe('GET /api-keys', () => {
  it("lists the caller's keys newest first, a page at a time, and no one else's", async () => {
    const owner = await signUp();
    const other = await signUp();
    await call('POST', '/api-keys', { token: other.token, body: { name: 'theirs', scopes: ['orders:read'] } });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await call('POST', '/api-keys', { token: owner.token, body: { name: `mine ${i}`, scopes: ['orders:read'] } })).body.id);
    const first = await call('GET', '/api-keys?size=2', { token: owner.token });
    expect(first.status).toBe(200);
    expect(first.body.items.map((key: { name: string }) => key.name)).toEqual(['mine 2', 'mine 1']);
    expect(first.body.hasNext).toBe(true);
    expect(first.body.items[0]).not.toHaveProperty('key');
    const second = await call('GET', `/api-keys?size=2&cursor=${encodeURIComponent(first.body.nextCursor)}`, { token: owner.token });
    expect(second.body).toMatchObject({ items: [{ id: ids[0], name: 'mine 0' }], hasNext: false, nextCursor: null });
    // A cursor of another user's list does not page this one.
    const theirs = await call('GET', '/api-keys?size=1', { token: other.token });
    expect((await call('GET', '/api-keys?sort=name', { token: owner.token })).body.errors[0]).toMatchObject({ field: 'sort', code: 'UNKNOWN_PARAMETER' });
    expect(theirs.body.items.map((key: { name: string }) => key.name)).toEqual(['theirs']);
  });

  it("answers 404 for another user's key, an admin's call included, and for a malformed id", async () => {
    const owner = await signUp();
    const other = await signUp();
    const key = await call('POST', '/api-keys', { token: owner.token, body: { name: 'mine', scopes: ['orders:read'] } });
    for (const res of [await call('GET', `/api-keys/${key.body.id}`, { token: other.token }), await call('DELETE', `/api-keys/${key.body.id}`, { token: other.token }), await call('POST', `/api-keys/${key.body.id}/rotation`, { token: other.token, body: { overlapSeconds: 60 } }), await call('GET', '/api-keys/not-an-id', { token: owner.token })]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('NOT_FOUND');
    }
    expect((await verify(key.body.key)).body.valid).toBe(true);
  });
});

describe('verification (the gateway) and revocation', () => {
  it('tells the gateway who a key acts for and what it may do; unknown, forged, revoked and expired keys are not valid', async () => {
    const owner = await signUp();
    const key = (await call('POST', '/api-keys', { token: owner.token, body: { name: 'bot', scopes: ['orders:read'] } })).body;
    expect((await verify(key.key)).body).toEqual({ valid: true, id: key.id, ownerId: owner.id, role: 'customer', credentialVersion: 1, scopes: ['orders:read'], expiresAt: null });
    // The right id with another secret (a forged key whose checksum the forger computed) is unknown.
    expect((await verify(newApiKeyText(key.id))).body).toEqual({ valid: false, reason: 'unknown' });
    expect((await verify('opk_not-even-close')).body).toEqual({ valid: false, reason: 'unknown' });
    // Only the gateway asks.
    expect((await call('POST', '/internal/api-key-verifications', { token: owner.token, body: { key: key.key } })).status).toBe(401);
    expect((await call('POST', '/internal/api-key-verifications', { token: await serviceTokenSource(JWT_SECRET, 'orders-service')(), body: { key: key.key } })).status).toBe(403);

    published.length = 0;
    expect((await call('DELETE', `/api-keys/${key.id}`, { token: owner.token })).status).toBe(204);
    expect(published).toEqual([{ apiKeyId: key.id }]);
    expect((await verify(key.key)).body).toEqual({ valid: false, reason: 'revoked' });
    const read = await call('GET', `/api-keys/${key.id}`, { token: owner.token });
    expect(read.body).toMatchObject({ status: 'REVOKED', revokedAt: expect.stringMatching(/Z$/) });
    // Again: still revoked, nothing pushed twice.
    expect((await call('DELETE', `/api-keys/${key.id}`, { token: owner.token })).status).toBe(204);
    expect(published).toHaveLength(1);

    const expiring = (await call('POST', '/api-keys', { token: owner.token, body: { name: 'short', scopes: ['orders:read'], expiresAt: new Date(Date.now() + 60_000).toISOString() } })).body;
    await database.prisma.apiKey.update({ where: { id: expiring.id }, data: { expiresAt: new Date(Date.now() - 1_000) } });
    expect((await verify(expiring.key)).body).toEqual({ valid: false, reason: 'expired' });
    expect((await call('GET', `/api-keys/${expiring.id}`, { token: owner.token })).body.status).toBe('EXPIRED');
  });

  it('writes lastUsedAt on use, at most once a minute', async () => {
    const owner = await signUp();
    const key = (await call('POST', '/api-keys', { token: owner.token, body: { name: 'busy', scopes: ['orders:read'] } })).body;
    await verify(key.key);
    const first = (await call('GET', `/api-keys/${key.id}`, { token: owner.token })).body.lastUsedAt;
    expect(first).toEqual(expect.stringMatching(/Z$/));
    await verify(key.key);
    expect((await call('GET', `/api-keys/${key.id}`, { token: owner.token })).body.lastUsedAt).toBe(first);
    // A minute later the next use is written.
    await database.prisma.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: new Date(Date.now() - 61_000) } });
    await verify(key.key);
    expect(Date.parse((await call('GET', `/api-keys/${key.id}`, { token: owner.token })).body.lastUsedAt)).toBeGreaterThan(Date.parse(first) - 1);
  });

  it("stops every key of a deleted user (the rows go with the user)", async () => {
    const owner = await signUp();
    const key = (await call('POST', '/api-keys', { token: owner.token, body: { name: 'orphan', scopes: ['orders:read'] } })).body;
    expect((await call('DELETE', `/users/${owner.id}`, { token: owner.token })).status).toBe(204);
    expect((await verify(key.key)).body).toEqual({ valid: false, reason: 'unknown' });
    expect(await database.prisma.apiKey.count({ where: { id: key.id } })).toBe(0);
  });

  it('answers 401, never a 5xx, to a token whose user was deleted meanwhile asking for a key, and stores none', async () => {
    // The gateway refuses such a token within 5 s; a request already past it reaches the service.
    const owner = await signUp();
    expect((await call('DELETE', `/users/${owner.id}`, { token: owner.token })).status).toBe(204);
    const refused = await call('POST', '/api-keys', { token: owner.token, body: { name: 'too late', scopes: ['orders:read'] } });
    expect([refused.status, refused.body.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect(await database.prisma.apiKey.count({ where: { userId: owner.id } })).toBe(0);
  });
});

describe('POST /api-keys/{id}/rotation', () => {
  it('answers a new key once; the old one keeps working for the overlap, then stops', async () => {
    const owner = await signUp();
    const old = (await call('POST', '/api-keys', { token: owner.token, body: { name: 'rotating', scopes: ['orders:read', 'products:read'] } })).body;
    const res = await call('POST', `/api-keys/${old.id}/rotation`, { token: owner.token, body: { overlapSeconds: 3600 } });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/v1/api-keys/${res.body.id}`);
    expect(res.body).toMatchObject({ name: 'rotating', scopes: ['orders:read', 'products:read'], status: 'ACTIVE', rotatedFromId: old.id, key: expect.stringMatching(/^opk_/) });
    expect(res.body.key).not.toBe(old.key);
    const oldNow = (await call('GET', `/api-keys/${old.id}`, { token: owner.token })).body;
    expect(Math.abs(Date.parse(oldNow.expiresAt) - (Date.now() + 3_600_000))).toBeLessThan(60_000);
    expect((await verify(old.key)).body.valid).toBe(true);
    expect((await verify(res.body.key)).body.valid).toBe(true);
    await database.prisma.apiKey.update({ where: { id: old.id }, data: { expiresAt: new Date(Date.now() - 1) } });
    expect((await verify(old.key)).body).toEqual({ valid: false, reason: 'expired' });
    // An expired key cannot be rotated.
    const again = await call('POST', `/api-keys/${old.id}/rotation`, { token: owner.token, body: { overlapSeconds: 60 } });
    expect([again.status, again.body.code]).toEqual([409, 'API_KEY_NOT_ACTIVE']);
  });

  it(`counts the new key against the ${MAX_ACTIVE_KEYS_PER_USER} active ones: only the key on its way out may be one more, during its overlap`, async () => {
    const owner = await signUp();
    const made = await Promise.all(Array.from({ length: MAX_ACTIVE_KEYS_PER_USER }, (_, i) => call('POST', '/api-keys', { token: owner.token, body: { name: `k${i}`, scopes: ['orders:read'] } })));
    const [first, second] = made.map((res) => res.body);
    const rotated = await call('POST', `/api-keys/${first.id}/rotation`, { token: owner.token, body: { overlapSeconds: 3600 } });
    expect(rotated.status).toBe(201);
    // Each further rotation would add a key living as long as the overlap: the same key, its successor or another.
    for (const id of [rotated.body.id, second.id]) {
      const refused = await call('POST', `/api-keys/${id}/rotation`, { token: owner.token, body: { overlapSeconds: 3600 } });
      expect([refused.status, refused.body.code]).toEqual([409, 'API_KEY_LIMIT_REACHED']);
    }
    // The key already rotated is refused for that, which no revocation would change.
    const again = await call('POST', `/api-keys/${first.id}/rotation`, { token: owner.token, body: { overlapSeconds: 3600 } });
    expect([again.status, again.body.code]).toEqual([409, 'API_KEY_NOT_ACTIVE']);
    const active = await database.prisma.apiKey.count({ where: { userId: owner.id, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }] } });
    expect(active).toBe(MAX_ACTIVE_KEYS_PER_USER + 1);
    expect((await call('DELETE', `/api-keys/${first.id}`, { token: owner.token })).status).toBe(204);
    expect((await call('POST', `/api-keys/${second.id}/rotation`, { token: owner.token, body: { overlapSeconds: 3600 } })).status).toBe(201);
  });

  it('refuses to rotate a key already rotated (in its overlap): its successor keeps the expiry, the key has one successor', async () => {
    const owner = await signUp();
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const old = (await call('POST', '/api-keys', { token: owner.token, body: { name: 'twice', scopes: ['orders:read'], expiresAt } })).body;
    const successor = await call('POST', `/api-keys/${old.id}/rotation`, { token: owner.token, body: { overlapSeconds: 3600 } });
    expect([successor.status, successor.body.expiresAt]).toEqual([201, expiresAt]);
    // The old key still works (its overlap), but rotating it again would give a key ending with that overlap.
    const again = await call('POST', `/api-keys/${old.id}/rotation`, { token: owner.token, body: { overlapSeconds: 60 } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'API_KEY_NOT_ACTIVE', message: expect.stringContaining(successor.body.id) });
    expect(await database.prisma.apiKey.count({ where: { rotatedFromId: old.id } })).toBe(1);
    // The successor is rotated in its turn, its expiry going on to the next.
    const next = await call('POST', `/api-keys/${successor.body.id}/rotation`, { token: owner.token, body: { overlapSeconds: 60 } });
    expect([next.status, next.body.expiresAt, next.body.rotatedFromId]).toEqual([201, expiresAt, successor.body.id]);
  });

  it('lets one of two concurrent rotations of a key win; the other is 409 and makes no key', async () => {
    const owner = await signUp();
    const old = (await call('POST', '/api-keys', { token: owner.token, body: { name: 'raced', scopes: ['orders:read'] } })).body;
    const both = await Promise.all([3600, 7200].map((overlapSeconds) => call('POST', `/api-keys/${old.id}/rotation`, { token: owner.token, body: { overlapSeconds } })));
    expect(both.map((res) => res.status).sort()).toEqual([201, 409]);
    const won = both.find((res) => res.status === 201)!;
    expect(won.body).toMatchObject({ expiresAt: null, rotatedFromId: old.id });
    expect(both.find((res) => res.status === 409)!.body).toMatchObject({ code: 'API_KEY_NOT_ACTIVE', message: expect.stringContaining(won.body.id) });
    const successors = await database.prisma.apiKey.findMany({ where: { rotatedFromId: old.id } });
    expect(successors.map((row) => [row.id, row.expiresAt])).toEqual([[won.body.id, null]]);
  });

  it('stops the old key at once with an overlap of 0, and refuses an overlap beyond 7 days', async () => {
    const owner = await signUp();
    const old = (await call('POST', '/api-keys', { token: owner.token, body: { name: 'leaked', scopes: ['orders:read'] } })).body;
    const tooLong = await call('POST', `/api-keys/${old.id}/rotation`, { token: owner.token, body: { overlapSeconds: 7 * 86_400 + 1 } });
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.errors[0]).toMatchObject({ field: 'overlapSeconds', code: 'OUT_OF_RANGE' });
    expect((await call('POST', `/api-keys/${old.id}/rotation`, { token: owner.token, body: {} })).status).toBe(400);
    published.length = 0;
    const res = await call('POST', `/api-keys/${old.id}/rotation`, { token: owner.token, body: { overlapSeconds: 0 } });
    expect(res.status).toBe(201);
    expect(published).toEqual([{ apiKeyId: old.id }]);
    expect((await verify(old.key)).body).toEqual({ valid: false, reason: 'revoked' });
    expect((await verify(res.body.key)).body.valid).toBe(true);
  });
});
