// The users API as a client sees it: real HTTP against the real app on a real database
// (PostgreSQL when TEST_DATABASE_URL is set, PGlite otherwise).
import crypto from 'node:crypto';
import path from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { emailKeyOf, serviceTokenSource } from '@platform/auth';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { createLogger, createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { Redis } from 'ioredis';
import { REVOCATIONS_CHANNEL } from '@platform/auth';
import { MAX_BODY_BYTES } from '@platform/errors';
import { apiClient, RedisServer, timeAnswer, PROMPT_REFUSAL_MS } from '@platform/test-kit';
import { redisRevocationPublisher } from '../credentials/revocations';
import { PrismaClient } from '../generated/prisma/client';
import { createUsersApp } from '../app';

const JWT_SECRET = 'users-test-secret-users-test-secret-0123';
let database: Database<PrismaClient>;
let server: Listening;
const responses: string[] = [];

const call = apiClient(() => server.url, (text) => responses.push(text));

let seq = 0;
async function signUp(overrides: Record<string, unknown> = {}) {
  seq += 1;
  const email = `user${seq}-${Date.now()}@example.com`;
  const res = await call('POST', '/users', { body: { name: `User ${seq}`, email, password: 'correct-horse-1', ...overrides } });
  expect(res.status).toBe(201);
  const token = await call('POST', '/tokens', { body: { email: (overrides.email as string) ?? email, password: (overrides.password as string) ?? 'correct-horse-1' } });
  return { user: res.body, token: token.body.accessToken as string, email };
}

let adminToken: string;

beforeAll(async () => {
  database = await openTestDatabase({ service: 'users', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  const built = await createUsersApp({
    config: { jwtSecret: JWT_SECRET, jwtVerifySecrets: [JWT_SECRET], cursorSecret: 'cursor-secret-for-tests', ACCESS_TOKEN_TTL_S: 600, REQUEST_TIMEOUT_MS: 10_000, NODE_ENV: 'test' },
    prisma: database.prisma,
    logger: createLogger('users-test', 'silent'),
    health: new Health(),
    metrics: createMetrics('users-test'),
  });
  expect(await built.users.bootstrapAdmin('root@example.com', 'root-password-1')).toBe('created');
  expect(await built.users.bootstrapAdmin('root@example.com', 'root-password-1')).toBe('exists');
  server = await listen(built.app, 0, '127.0.0.1');
  adminToken = (await call('POST', '/tokens', { body: { email: 'root@example.com', password: 'root-password-1' } })).body.accessToken;
});

afterAll(async () => {
  await server?.close();
  await database?.close();
});

describe('POST /users (sign-up)', () => {
  it('creates a customer: 201, Location, ETag and every field, never the password', async () => {
    const res = await call('POST', '/users', {
      body: { name: 'Kim Minji', email: 'Minji@Example.com', password: 'correct-horse-1', phone: '+82 10-1234-5678', address: { zipCode: '06236', line1: 'Teheran-ro 1', line2: '3F' }, nickname: 'mj', marketingAgreed: true },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/v1/users/${res.body.id}`);
    expect(res.headers.get('etag')).toBe('"1"');
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[\da-f-]{36}$/),
      name: 'Kim Minji',
      email: 'Minji@Example.com',
      phone: '+82 10-1234-5678',
      address: { zipCode: '06236', line1: 'Teheran-ro 1', line2: '3F' },
      nickname: 'mj',
      marketingAgreed: true,
      role: 'customer',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      lastLoginAt: null,
    });
    const row = await database.prisma.user.findUnique({ where: { id: res.body.id } });
    expect(row?.passwordHash).toMatch(/^scrypt\$/);
    expect(row?.emailKey).toBe('minji@example.com');
  });

  it('sends every optional field as null when not given', async () => {
    const { user } = await signUp();
    expect(user).toMatchObject({ phone: null, address: null, nickname: null, marketingAgreed: false, lastLoginAt: null });
  });

  it('answers 409 EMAIL_TAKEN for a taken email in any letter case', async () => {
    const { email } = await signUp();
    const res = await call('POST', '/users', { body: { name: 'Again', email: email.toUpperCase(), password: 'correct-horse-1' } });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('EMAIL_TAKEN');
  });

  it('refuses a taken email before hashing its password: repeating it spends no password work', async () => {
    const { email } = await signUp();
    // Password work is scrypt (password.ts): none may run for this request.
    const hashing = jest.spyOn(crypto, 'scrypt');
    try {
      const res = await call('POST', '/users', { body: { name: 'Again', email, password: 'correct-horse-1' } });
      expect(res.status).toBe(409);
      expect(hashing).not.toHaveBeenCalled();
    } finally {
      hashing.mockRestore();
    }
  });

  it.each([
    ['nickname', 'evil\u202Egnp.exe'],
    ['nickname', 'bell\u0007'],
    ['name', 'Ada\u2066 Lovelace'],
    ['name', 'Ada\u009b'],
  ])('refuses a %s with a control character or a bidirectional override (422 INVALID_FORMAT)', async (field, value) => {
    const res = await call('POST', '/users', { body: { name: 'Ada', email: `shown-${Date.now()}-${Math.random()}@example.com`, password: 'correct-horse-1', [field]: value } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field, code: 'INVALID_FORMAT', message: expect.stringMatching(/control characters or bidirectional overrides/) }]);
  });

  it('lets exactly one of two concurrent sign-ups with one email win', async () => {
    const body = { name: 'Race', email: `race-${Date.now()}@example.com`, password: 'correct-horse-1' };
    const results = await Promise.all([call('POST', '/users', { body }), call('POST', '/users', { body })]);
    expect(results.map((res) => res.status).sort()).toEqual([201, 409]);
    expect(await database.prisma.user.count({ where: { emailKey: body.email } })).toBe(1);
  });

  it('answers 400 listing every missing, mistyped and unknown field', async () => {
    const res = await call('POST', '/users', { body: { name: 42, marketingAgreed: 'yes', role: 'admin' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`).sort()).toEqual(
      ['email:REQUIRED', 'marketingAgreed:INVALID_TYPE', 'name:INVALID_TYPE', 'password:REQUIRED', 'role:UNKNOWN_FIELD'].sort(),
    );
  });

  it('answers 422 when the fields are readable but break rules', async () => {
    const res = await call('POST', '/users', { body: { name: 'x'.repeat(101), email: 'not-an-email', password: 'short' } });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`)).toEqual(['name:TOO_LONG', 'email:INVALID_FORMAT', 'password:TOO_SHORT']);
  });

  it('answers 400 MALFORMED_JSON and 415 for a body it cannot read', async () => {
    const malformed = await fetch(`${server.url}/users`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { code: string }).code).toBe('MALFORMED_JSON');
    const form = await fetch(`${server.url}/users`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=x' });
    expect(form.status).toBe(415);
  });

  it('answers a 1 MiB body of nothing but nesting with 400 in the error format within a second, and the next caller at once', async () => {
    const levels = MAX_BODY_BYTES / 2;
    const answer = await timeAnswer(server.url, 'POST', '/users', { 'content-type': 'application/json' }, '['.repeat(levels) + ']'.repeat(levels));
    expect(answer).toMatchObject({ status: 400, body: { code: 'MALFORMED_JSON', message: 'The request body nests deeper than 64 levels.', traceId: expect.any(String), errors: [] } });
    expect(answer.ms).toBeLessThan(PROMPT_REFUSAL_MS);
    const next = await call('GET', '/users/me', { token: adminToken });
    expect(next.status).toBe(200);
  });

  it('takes a body nested exactly 64 levels deep, and refuses 65 in objects and arrays alike', async () => {
    const nested = (depth: number) => JSON.parse('{"a":'.repeat(depth) + '1' + '}'.repeat(depth)) as unknown;
    const atLimit = await call('POST', '/users', { body: { name: 'Deep', email: 'deep@example.com', password: 'correct-horse-1', address: { zipCode: '1', line1: 'x', line2: null, extra: nested(62) } } });
    expect([atLimit.status, atLimit.body.errors]).toEqual([400, [{ field: 'address.extra', code: 'UNKNOWN_FIELD', message: "Unknown field 'extra'." }]]);
    for (const text of ['{"a":'.repeat(65) + '1' + '}'.repeat(65), '['.repeat(65) + ']'.repeat(65), '[{"a":'.repeat(33) + '1' + '}]'.repeat(33)]) {
      const res = await call('POST', '/users', { body: text });
      expect([res.status, res.body.code]).toEqual([400, 'MALFORMED_JSON']);
    }
    // Brackets inside strings are text, not nesting.
    const inText = await call('POST', '/users', { body: { name: '['.repeat(101), email: `brackets-${Date.now()}@example.com`, password: '{{{{{{{{{{"\\[[[[' } });
    expect(inText.status).toBe(422);
    expect(inText.body.errors.map((e: { field: string }) => e.field)).toEqual(['name']);
  });
});

describe('POST /tokens', () => {
  it('issues a bearer token and records lastLoginAt', async () => {
    const { email, user } = await signUp();
    const res = await call('POST', '/tokens', { body: { email, password: 'correct-horse-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({ accessToken: expect.any(String), tokenType: 'Bearer', expiresIn: 600 });
    const me = await call('GET', '/users/me', { token: res.body.accessToken });
    expect(me.body.id).toBe(user.id);
    expect(Date.parse(me.body.lastLoginAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('gives the same 401 for a wrong password and an unknown email', async () => {
    const { email } = await signUp();
    const wrong = await call('POST', '/tokens', { body: { email, password: 'wrong-password' } });
    const unknown = await call('POST', '/tokens', { body: { email: 'nobody@example.com', password: 'wrong-password' } });
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('INVALID_CREDENTIALS');
    }
    expect(wrong.body.message).toBe(unknown.body.message);
  });

  // The gateway limits sign-in per `emailKeyOf(email)` (@platform/auth): every form of an address
  // that signs in to an account must have that account's stored key as its key, or it would be
  // guessed at on a budget of its own.
  it('signs in under every form of the address whose key is the stored one, and under no other form', async () => {
    const tag = Date.now();
    const { user } = await signUp({ email: `Kim.Tricky-${tag}@Example.COM` });
    const row = await database.prisma.user.findUnique({ where: { id: user.id } });
    expect(row?.emailKey).toBe(`kim.tricky-${tag}@example.com`);
    const sameAccount = [
      `kim.tricky-${tag}@example.com`,
      `KIM.TRICKY-${tag}@EXAMPLE.COM`,
      ` \tKim.Tricky-${tag}@Example.com\r\n`,
      `\u00a0kim.tricky-${tag}@example.com\ufeff`,
      `\u212aim.tricky-${tag}@example.com`, // the Kelvin sign: its lower case is k
    ];
    for (const email of sameAccount) {
      const res = await call('POST', '/tokens', { body: { email, password: 'correct-horse-1' } });
      expect([JSON.stringify(email), res.status]).toEqual([JSON.stringify(email), 200]);
      expect((await call('GET', '/users/me', { token: res.body.accessToken })).body.id).toBe(user.id);
      expect(emailKeyOf(email)).toBe(row?.emailKey);
    }
    // Full-width letters are not folded (no NFKC), by the service or the gateway's key.
    const fullWidth = `ｋｉｍ.tricky-${tag}@example.com`;
    expect((await call('POST', '/tokens', { body: { email: fullWidth, password: 'correct-horse-1' } })).status).toBe(401);
    expect(emailKeyOf(fullWidth)).not.toBe(row?.emailKey);
  });
});

describe('authentication', () => {
  it('answers 401 UNAUTHENTICATED with WWW-Authenticate for a missing, unsigned or tampered token', async () => {
    const { token } = await signUp();
    const [header, payload] = token.split('.');
    const elevated = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), role: 'admin' })).toString('base64url');
    const none = new UnsecuredJWT({ role: 'admin' }).setSubject('x').setIssuer('order-platform').setAudience('order-platform-api').setExpirationTime('1h').encode();
    const forged = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS256' }).setSubject('x').setExpirationTime('1h').sign(new TextEncoder().encode('guessed-secret-guessed-secret-guessed'));
    for (const bad of [undefined, none, `${header}.${elevated}.${token.split('.')[2]}`, forged]) {
      const res = await call('GET', '/users/me', { token: bad });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('UNAUTHENTICATED');
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });
});

describe('GET /users/{id}', () => {
  it('shows a customer themselves, with an ETag', async () => {
    const { user, token } = await signUp();
    const res = await call('GET', `/users/${user.id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(user.id);
    expect(res.headers.get('etag')).toBe('"1"');
  });

  it('reads an id in any case as the same user (RFC 9562), answering it lowercase; `ME` is no user', async () => {
    const { user, token } = await signUp();
    const res = await call('GET', `/users/${user.id.toUpperCase()}`, { token });
    expect([res.status, res.body.id, res.headers.get('etag')]).toEqual([200, user.id, '"1"']);
    const patched = await call('PATCH', `/users/${user.id.toUpperCase()}`, { token, body: { name: 'Upper Case' }, headers: { 'if-match': '"1"' } });
    expect([patched.status, patched.body.id, patched.headers.get('etag')]).toEqual([200, user.id, '"2"']);
    expect((await call('GET', '/users/ME', { token })).status).toBe(404);
  });

  it("hides another customer's user behind 404, and shows it to an admin", async () => {
    const alice = await signUp();
    const bob = await signUp();
    const hidden = await call('GET', `/users/${bob.user.id}`, { token: alice.token });
    expect(hidden.status).toBe(404);
    expect(hidden.body.code).toBe('NOT_FOUND');
    expect((await call('GET', `/users/${bob.user.id}`, { token: adminToken })).status).toBe(200);
  });

  it('answers 404 for an unknown or malformed id and 400 for an unknown parameter', async () => {
    expect((await call('GET', '/users/01a20097-b6ee-740a-909d-9896572adaa7', { token: adminToken })).status).toBe(404);
    expect((await call('GET', '/users/42', { token: adminToken })).status).toBe(404);
    const res = await call('GET', '/users/me?expand=all', { token: adminToken });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].code).toBe('UNKNOWN_PARAMETER');
  });
});

describe('GET /users (admin list)', () => {
  it('answers 403 FORBIDDEN to a customer', async () => {
    const { token } = await signUp();
    const res = await call('GET', '/users', { token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });

  it('filters by name prefix, email and marketingAgreed, sorts, counts and walks pages', async () => {
    const tag = `Zed${Date.now()}`;
    for (let i = 0; i < 5; i++) await call('POST', '/users', { body: { name: `${tag} ${i}`, email: `${tag}-${i}@example.com`, password: 'correct-horse-1', marketingAgreed: i % 2 === 0 } });
    const first = await call('GET', `/users?name=${tag}&sort=name,asc&size=2&withTotal=true`, { token: adminToken });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ hasNext: true, totalCount: 5 });
    expect(first.body.items.map((u: { name: string }) => u.name)).toEqual([`${tag} 0`, `${tag} 1`]);
    const names: string[] = first.body.items.map((u: { name: string }) => u.name);
    let cursor = first.body.nextCursor;
    while (cursor) {
      const next = await call('GET', `/users?name=${tag}&sort=name,asc&size=2&cursor=${encodeURIComponent(cursor)}`, { token: adminToken });
      expect(next.status).toBe(200);
      names.push(...next.body.items.map((u: { name: string }) => u.name));
      cursor = next.body.nextCursor;
      if (!next.body.hasNext) expect(cursor).toBeNull();
    }
    expect(names).toEqual([0, 1, 2, 3, 4].map((i) => `${tag} ${i}`));
    const agreed = await call('GET', `/users?name=${tag}&marketingAgreed=true&withTotal=true`, { token: adminToken });
    expect(agreed.body.totalCount).toBe(3);
    const byEmail = await call('GET', `/users?email=${tag.toUpperCase()}-3@EXAMPLE.COM`, { token: adminToken });
    expect(byEmail.body.items.map((u: { name: string }) => u.name)).toEqual([`${tag} 3`]);
    const today = new Date().toISOString().slice(0, 10);
    const created = await call('GET', `/users?name=${tag}&createdFrom=${today}&createdTo=${today}&withTotal=true`, { token: adminToken });
    expect(created.body.totalCount).toBe(5);
  });

  it('reads % and _ in a name prefix as plain characters, and a prefix ending past the last letter', async () => {
    const tag = `Pct${Date.now()}`;
    for (const name of [`${tag} 50% off`, `${tag} 50x off`, `${tag} a_b`, `${tag} axb`, `${tag} z\u{10FFFF}`]) {
      const res = await call('POST', '/users', { body: { name, email: `${tag}-${seq++}@example.com`, password: 'correct-horse-1' } });
      expect(res.status).toBe(201);
    }
    const names = async (prefix: string) => (await call('GET', `/users?name=${encodeURIComponent(prefix)}&sort=name&withTotal=true`, { token: adminToken })).body;
    expect(await names(`${tag} 50%`)).toMatchObject({ totalCount: 1, items: [{ name: `${tag} 50% off` }] });
    expect(await names(`${tag} a_`)).toMatchObject({ totalCount: 1, items: [{ name: `${tag} a_b` }] });
    expect((await names(`${tag} %`)).totalCount).toBe(0);
    expect(await names(`${tag} z\u{10FFFF}`)).toMatchObject({ totalCount: 1, items: [{ name: `${tag} z\u{10FFFF}` }] });
    // A prefix ending just below the surrogates: 200. One ending in a lone surrogate's bytes (a
    // client's broken text, not UTF-8) cannot be read as sent: 400 naming `name`, never a 5xx.
    expect((await call('GET', `/users?name=${encodeURIComponent(`${tag} \u{D7FF}`)}`, { token: adminToken })).status).toBe(200);
    const broken = await call('GET', `/users?name=${tag}%20%ED%A0%80`, { token: adminToken });
    expect([broken.status, broken.body.code, broken.body.errors]).toEqual([400, 'VALIDATION_FAILED', [expect.objectContaining({ field: 'name', code: 'INVALID_FORMAT' })]]);
  });

  it('counts exactly up to 1,000 users and, past that, answers an estimate flagged by Total-Count-Estimated', async () => {
    await database.prisma.$executeRawUnsafe(
      `INSERT INTO users (id, name, email, email_key, password_hash, updated_at)
       SELECT gen_random_uuid(), 'Many ' || g, 'many' || g || '@example.com', 'many' || g || '@example.com', 'x', now() FROM generate_series(1, 1050) AS g`,
    );
    await database.prisma.$executeRawUnsafe('ANALYZE users');
    const estimated = await call('GET', '/users?name=Many&withTotal=true&size=1', { token: adminToken });
    expect(estimated.status).toBe(200);
    expect(estimated.body.totalCount).toBeGreaterThan(1_000);
    expect(estimated.headers.get('total-count-estimated')).toBe('true');
    expect(estimated.body).not.toHaveProperty('totalCountEstimated');
    const exact = await call('GET', '/users?name=Many%2010&withTotal=true&size=1', { token: adminToken });
    expect(exact.body.totalCount).toBe(62); // Many 10, 100..109 and 1000..1050
    expect(exact.headers.get('total-count-estimated')).toBeNull();
  });

  it('reads a creation day of year 0000 (ISO 8601 has one, the database none) as before every user, never a 5xx', async () => {
    const all = await call('GET', '/users?createdFrom=0000-01-01&size=1&withTotal=true', { token: adminToken });
    expect([all.status, all.body.totalCount > 0]).toEqual([200, true]);
    const none = await call('GET', '/users?createdTo=0000-01-01', { token: adminToken });
    expect([none.status, none.body.items]).toEqual([200, []]);
  });

  it('refuses a sort outside the allow-list, an unknown parameter and a forged cursor with 400', async () => {
    const sort = await call('GET', '/users?sort=phone', { token: adminToken });
    expect(sort.status).toBe(400);
    expect(sort.body.errors[0]).toMatchObject({ field: 'sort', code: 'NOT_ALLOWED' });
    const unknown = await call('GET', '/users?role=admin', { token: adminToken });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0]).toMatchObject({ field: 'role', code: 'UNKNOWN_PARAMETER' });
    const forged = await call('GET', '/users?cursor=eyJzIjoiYSJ9.AAAA', { token: adminToken });
    expect(forged.status).toBe(400);
    expect(forged.body.code).toBe('INVALID_CURSOR');
  });

  it('caps size at 100 and supports page and offset paging', async () => {
    const big = await call('GET', '/users?size=1000', { token: adminToken });
    expect(big.status).toBe(200);
    expect(big.body.items.length).toBeLessThanOrEqual(100);
    const page2 = await call('GET', '/users?page=2&size=1&sort=createdAt,asc', { token: adminToken });
    const offset1 = await call('GET', '/users?offset=1&limit=1&sort=createdAt,asc', { token: adminToken });
    expect(page2.body.items[0].id).toBe(offset1.body.items[0].id);
    expect((await call('GET', '/users?page=2&offset=1', { token: adminToken })).status).toBe(400);
  });
});

describe('PATCH and PUT /users/{id}', () => {
  it('PATCH changes only the fields sent and moves the ETag', async () => {
    const { user, token } = await signUp({ nickname: 'before', phone: '010-1111-2222' });
    const res = await call('PATCH', `/users/${user.id}`, { token, body: { nickname: 'after' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ nickname: 'after', phone: '010-1111-2222', name: user.name });
    expect(res.headers.get('etag')).toBe('"2"');
  });

  it('answers 412 when If-Match does not match, and applies when it does', async () => {
    const { user, token } = await signUp();
    const stale = await call('PATCH', `/users/${user.id}`, { token, body: { nickname: 'x' }, headers: { 'if-match': '"7"' } });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe('PRECONDITION_FAILED');
    const fresh = await call('PATCH', `/users/${user.id}`, { token, body: { nickname: 'x' }, headers: { 'if-match': '"1"' } });
    expect(fresh.status).toBe(200);
    expect((await call('PUT', `/users/${user.id}`, { token, body: { name: 'n', email: `${seq}-put@example.com` }, headers: { 'if-match': '"1"' } })).status).toBe(412);
  });

  it("refuses a password change of another user's account before hashing it", async () => {
    const { token } = await signUp();
    const { user: other } = await signUp();
    const hashing = jest.spyOn(crypto, 'scrypt');
    try {
      const res = await call('PATCH', `/users/${other.id}`, { token, body: { password: 'a-brand-new-secret' } });
      expect(res.status).toBe(404);
      expect(hashing).not.toHaveBeenCalled();
    } finally {
      hashing.mockRestore();
    }
  });

  it('PATCH password changes the credential', async () => {
    const { user, token, email } = await signUp();
    expect((await call('PATCH', `/users/${user.id}`, { token, body: { password: 'a-brand-new-secret' } })).status).toBe(200);
    expect((await call('POST', '/tokens', { body: { email, password: 'correct-horse-1' } })).status).toBe(401);
    expect((await call('POST', '/tokens', { body: { email, password: 'a-brand-new-secret' } })).status).toBe(200);
  });

  it('PUT replaces the whole user: fields not sent are cleared', async () => {
    const { user, token, email } = await signUp({ nickname: 'nick', phone: '010-1111-2222', marketingAgreed: true, address: { zipCode: '1', line1: 'a' } });
    const res = await call('PUT', `/users/${user.id}`, { token, body: { name: 'Replaced', email } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Replaced', email, nickname: null, phone: null, address: null, marketingAgreed: false });
  });

  it('PUT without a required field answers 400; PATCH to a taken email answers 409', async () => {
    const { user, token } = await signUp();
    const other = await signUp();
    const missing = await call('PUT', `/users/${user.id}`, { token, body: { nickname: 'only' } });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['email', 'name']);
    const taken = await call('PATCH', `/users/${user.id}`, { token, body: { email: other.email } });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('EMAIL_TAKEN');
  });

  it("hides another customer's user from PATCH, PUT and DELETE (404)", async () => {
    const alice = await signUp();
    const bob = await signUp();
    expect((await call('PATCH', `/users/${bob.user.id}`, { token: alice.token, body: { nickname: 'x' } })).status).toBe(404);
    expect((await call('PUT', `/users/${bob.user.id}`, { token: alice.token, body: { name: 'x', email: 'x@example.com' } })).status).toBe(404);
    expect((await call('DELETE', `/users/${bob.user.id}`, { token: alice.token })).status).toBe(404);
  });
});

describe('DELETE /users/{id}', () => {
  it('answers 204 with an empty body; then the user is gone (404)', async () => {
    const { user } = await signUp();
    const res = await call('DELETE', `/users/${user.id}`, { token: adminToken });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await call('GET', `/users/${user.id}`, { token: adminToken })).status).toBe(404);
    expect((await call('DELETE', `/users/${user.id}`, { token: adminToken })).status).toBe(404);
  });

  it('with If-Match, deletes only the version it names: 412 once the user changed, and the user stays', async () => {
    const { user } = await signUp();
    const read = await call('GET', `/users/${user.id}`, { token: adminToken });
    const changed = await call('PATCH', `/users/${user.id}`, { token: adminToken, body: { name: 'Renamed by another admin' } });
    expect(changed.status).toBe(200);
    const stale = await call('DELETE', `/users/${user.id}`, { token: adminToken, headers: { 'if-match': read.headers.get('etag')! } });
    expect([stale.status, stale.body.code]).toEqual([412, 'PRECONDITION_FAILED']);
    expect((await call('GET', `/users/${user.id}`, { token: adminToken })).status).toBe(200);
    expect((await call('DELETE', `/users/${user.id}`, { token: adminToken, headers: { 'if-match': changed.headers.get('etag')! } })).status).toBe(204);
  });

  it('answers 405 with Allow for a method the resource lacks', async () => {
    const res = await call('POST', '/users/me', { token: adminToken, body: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, PUT, PATCH, DELETE, HEAD');
  });
});

describe('users subgraph', () => {
  async function graphql(query: string, token?: string, variables?: Record<string, unknown>) {
    return call('POST', '/graphql', { token, body: { query, variables } });
  }

  it('answers me and hides another user behind null plus a NOT_FOUND error', async () => {
    const alice = await signUp({ nickname: 'al' });
    const bob = await signUp();
    const me = await graphql('{ me { id name nickname } }', alice.token);
    expect(me.status).toBe(200);
    expect(me.body).toEqual({ data: { me: { id: alice.user.id, name: alice.user.name, nickname: 'al' } } });
    const other = await graphql('query($id: ID!) { user(id: $id) { id name } }', alice.token, { id: bob.user.id });
    expect(other.status).toBe(200);
    expect(other.body.data.user).toBeNull();
    expect(other.body.errors[0]).toMatchObject({ path: ['user'], extensions: { code: 'NOT_FOUND' } });
    // A malformed id is an unknown one, as over REST.
    const malformed = await graphql('{ user(id: "42") { id } }', adminToken);
    expect([malformed.body.data.user, malformed.body.errors[0].extensions.code]).toEqual([null, 'NOT_FOUND']);
    // Without a token the subgraph answers nothing at all: 401 in the error format.
    const anonymous = await graphql('{ me { id } }');
    expect([anonymous.status, anonymous.body.code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('resolves entity references in one batch, visible ones only', async () => {
    const alice = await signUp();
    const bob = await signUp();
    const query = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on User { id name } } }';
    const representations = [alice.user.id, bob.user.id, '42'].map((id) => ({ __typename: 'User', id }));
    const asAdmin = await graphql(query, adminToken, { r: representations });
    expect(asAdmin.body.data._entities).toEqual([expect.objectContaining({ id: alice.user.id }), expect.objectContaining({ id: bob.user.id }), null]);
    const asAlice = await graphql(query, alice.token, { r: representations });
    expect(asAlice.body.data._entities).toEqual([{ id: alice.user.id, name: alice.user.name }, null, null]);
  });
});

afterAll(() => {
  // No response of this whole suite carried a password or its hash.
  const leaked = responses.filter((text) => /passwordHash|password_hash|scrypt\$|correct-horse|root-password/.test(text));
  expect(leaked).toEqual([]);
  expect(responses.length).toBeGreaterThan(50);
});

describe('when the database cannot be reached', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After in the error format, not 500', async () => {
    const { PrismaPg } = await import('@prisma/adapter-pg');
    // Nothing listens on port 1: every query fails to connect, as when PostgreSQL is down.
    const unreachable = new PrismaClient({ adapter: new PrismaPg({ connectionString: 'postgresql://postgres@127.0.0.1:1/users', connectionTimeoutMillis: 1_000 }) });
    const built = await createUsersApp({
      config: { jwtSecret: JWT_SECRET, jwtVerifySecrets: [JWT_SECRET], cursorSecret: 'cursor-secret-for-tests', ACCESS_TOKEN_TTL_S: 600, REQUEST_TIMEOUT_MS: 10_000, NODE_ENV: 'test' },
      prisma: unreachable,
      logger: createLogger('users-test', 'silent'),
      health: new Health(),
      metrics: createMetrics('users-test-down'),
    });
    const down = await listen(built.app, 0, '127.0.0.1');
    try {
      const res = await apiClient(() => down.url)('POST', '/tokens', { body: { email: 'someone@example.com', password: 'correct-horse-1' } });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(res.body).toEqual({ code: 'SERVICE_UNAVAILABLE', message: expect.any(String), traceId: expect.any(String), errors: [] });
      expect(res.text).not.toMatch(/prisma|127\.0\.0\.1|ECONNREFUSED/i);
    } finally {
      await down.close();
      await unreachable.$disconnect();
    }
  });
});

describe('credential versions (the gateway refuses tokens their account outlived)', () => {
  const internal = async (id: string, service = 'gateway') => {
    return call('GET', `/internal/credentials/${id}`, { token: await serviceTokenSource(JWT_SECRET, service)() });
  };

  it('go up when the password changes (not on other changes), and a deleted user no longer exists', async () => {
    const { user, token } = await signUp();
    expect((await internal(user.id)).body).toEqual({ userId: user.id, exists: true, credentialVersion: 1 });
    expect((await call('PATCH', `/users/${user.id}`, { token, body: { nickname: 'same-credentials' } })).status).toBe(200);
    expect((await internal(user.id)).body.credentialVersion).toBe(1);
    expect((await call('PATCH', `/users/${user.id}`, { token, body: { password: 'a-new-password-2' } })).status).toBe(200);
    expect((await internal(user.id)).body.credentialVersion).toBe(2);
    const { jwtVerify } = await import('jose');
    const renewed = (await call('POST', '/tokens', { body: { email: user.email, password: 'a-new-password-2' } })).body.accessToken as string;
    expect((await jwtVerify(renewed, new TextEncoder().encode(JWT_SECRET))).payload.cv).toBe(2);
    expect((await call('DELETE', `/users/${user.id}`, { token: renewed })).status).toBe(204);
    expect((await internal(user.id)).body).toEqual({ userId: user.id, exists: false, credentialVersion: null });
  });

  it('are published on Redis for every gateway when the password changes or the user is deleted, and nothing else is', async () => {
    const redis = await RedisServer.start();
    const subscriber = new Redis(redis.url);
    const publisher = redisRevocationPublisher(redis.url, createLogger('users-test', 'silent'));
    const built = await createUsersApp({
      config: { jwtSecret: JWT_SECRET, jwtVerifySecrets: [JWT_SECRET], cursorSecret: 'cursor-secret-for-tests', ACCESS_TOKEN_TTL_S: 600, REQUEST_TIMEOUT_MS: 10_000, NODE_ENV: 'test' },
      prisma: database.prisma,
      logger: createLogger('users-test', 'silent'),
      health: new Health(),
      metrics: createMetrics('users-test-revocations'),
      revocations: publisher,
    });
    const pushing = await listen(built.app, 0, '127.0.0.1');
    const pushingCall = apiClient(() => pushing.url);
    const messages: unknown[] = [];
    try {
      subscriber.on('message', (_channel: string, message: string) => messages.push(JSON.parse(message)));
      await subscriber.subscribe(REVOCATIONS_CHANNEL);
      const { user, token } = await signUp();
      expect((await pushingCall('PATCH', `/users/${user.id}`, { token, body: { nickname: 'not-a-revocation' } })).status).toBe(200);
      expect((await pushingCall('PATCH', `/users/${user.id}`, { token, body: { password: 'a-new-password-2' } })).status).toBe(200);
      const renewed = (await pushingCall('POST', '/tokens', { body: { email: user.email, password: 'a-new-password-2' } })).body.accessToken as string;
      expect((await pushingCall('DELETE', `/users/${user.id}`, { token: renewed })).status).toBe(204);
      // Published before the answer left: both are there once the subscriber's connection delivers them.
      for (let i = 0; i < 50 && messages.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(messages).toEqual([
        { userId: user.id, credentialVersion: 2 },
        { userId: user.id, credentialVersion: null },
      ]);
      // Redis gone: the change still succeeds (the gateways' cache bound covers it).
      await redis.kill();
      const other = await signUp();
      expect((await pushingCall('PATCH', `/users/${other.user.id}`, { token: other.token, body: { password: 'a-new-password-3' } })).status).toBe(200);
    } finally {
      await pushing.close();
      subscriber.disconnect();
      await publisher.stop();
      await redis.stop();
    }
  });

  it('are read only by the gateway, with a service token', async () => {
    const { user, token } = await signUp();
    expect((await call('GET', `/internal/credentials/${user.id}`, { token })).status).toBe(401); // a person's token
    expect((await call('GET', `/internal/credentials/${user.id}`)).status).toBe(401);
    expect((await internal(user.id, 'orders-service')).status).toBe(403);
  });
});
