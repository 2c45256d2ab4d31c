// Issued API keys through the running stack, as a machine caller uses them: issued once, sent as
// X-Api-Key or a bearer value, acting as their owner narrowed by their scopes, over REST and
// GraphQL; rotated, and revoked (refused from the next request on this gateway, and on every
// gateway within a second with Redis: pushed).
import { apiClient } from '@platform/test-kit';
import { STOCKED_PRODUCTS, gatewayUrl } from './stack';
import { useContract } from './contract';

const call = apiClient(() => gatewayUrl, useContract(__filename).onResponse);

async function signUp() {
  const email = `keys-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const created = await call('POST', '/v1/users', { body: { name: 'Machine owner', email, password: 'owner-password-1' } });
  expect(created.status).toBe(201);
  const token = (await call('POST', '/v1/tokens', { body: { email, password: 'owner-password-1' } })).body.accessToken as string;
  return { id: created.body.id as string, token };
}

const withKey = (key: string) => ({ headers: { 'x-api-key': key } });

it("acts as its owner within its scopes, over REST and GraphQL, and shows when it was last used", async () => {
  const owner = await signUp();
  const issued = await call('POST', '/v1/api-keys', { token: owner.token, body: { name: 'order bot', scopes: ['orders:read', 'orders:write', 'products:read'] } });
  expect(issued.status).toBe(201);
  const key = issued.body.key as string;
  expect(key).toMatch(/^opk_[0-9a-f]{32}_[0-9A-Za-z]{38}$/);

  const productId = (await call('GET', STOCKED_PRODUCTS, withKey(key))).body.items[0].id as string;
  const order = await call('POST', '/v1/orders', { headers: { 'x-api-key': key, 'idempotency-key': `key-${issued.body.id}` }, body: { items: [{ productId, quantity: 1 }] } });
  expect(order.status).toBe(201);
  expect(order.body.userId).toBe(owner.id);
  // The owner sees the order the key placed.
  expect((await call('GET', `/v1/orders/${order.body.id}`, { token: owner.token })).status).toBe(200);

  // Outside its scopes: 403 in the error format; key management needs a token.
  const me = await call('GET', '/v1/users/me', withKey(key));
  expect([me.status, me.body.code, me.body.message]).toEqual([403, 'FORBIDDEN', 'This API key lacks the scope users:read.']);
  expect((await call('GET', '/v1/api-keys', withKey(key))).status).toBe(403);

  // GraphQL with the key as a bearer value: a query on orders runs, a field on users is refused.
  const graphql = (query: string) => call('POST', '/v1/graphql', { headers: { authorization: `Bearer ${key}` }, body: { query } });
  const orders = await graphql('{ orders(first: 5) { id } }');
  expect(orders.status).toBe(200);
  expect(orders.body.data.orders.map((one: { id: string }) => one.id)).toContain(order.body.id);
  const profile = await graphql('{ me { id } }');
  expect([profile.status, profile.body.code]).toEqual([403, 'FORBIDDEN']);

  const listed = await call('GET', '/v1/api-keys', { token: owner.token });
  expect(listed.status).toBe(200);
  expect(listed.body.items).toEqual([expect.objectContaining({ id: issued.body.id, name: 'order bot', status: 'ACTIVE', lastUsedAt: expect.stringMatching(/Z$/) })]);
  expect(listed.text).not.toContain(key.slice(37));
});

it('refuses a mistyped key, and a revoked one from the next request', async () => {
  const owner = await signUp();
  const issued = (await call('POST', '/v1/api-keys', { token: owner.token, body: { name: 'short-lived', scopes: ['products:read'] } })).body;
  const mistyped = issued.key.slice(0, -1) + (issued.key.endsWith('A') ? 'B' : 'A');
  const refused = await call('GET', STOCKED_PRODUCTS, withKey(mistyped));
  expect([refused.status, refused.body.code]).toEqual([401, 'UNAUTHENTICATED']);
  expect((await call('GET', STOCKED_PRODUCTS, withKey(issued.key))).status).toBe(200);
  expect((await call('DELETE', `/v1/api-keys/${issued.id}`, { token: owner.token })).status).toBe(204);
  const revoked = await call('GET', STOCKED_PRODUCTS, withKey(issued.key));
  expect([revoked.status, revoked.body.code]).toEqual([401, 'UNAUTHENTICATED']);
  expect((await call('GET', `/v1/api-keys/${issued.id}`, { token: owner.token })).body.status).toBe('REVOKED');
});

it('rotates: the new key works at once, the old one for the overlap chosen', async () => {
  const owner = await signUp();
  const old = (await call('POST', '/v1/api-keys', { token: owner.token, body: { name: 'rotating', scopes: ['products:read'] } })).body;
  const overlapping = await call('POST', `/v1/api-keys/${old.id}/rotation`, { token: owner.token, body: { overlapSeconds: 3600 } });
  expect(overlapping.status).toBe(201);
  expect((await call('GET', STOCKED_PRODUCTS, withKey(old.key))).status).toBe(200);
  expect((await call('GET', STOCKED_PRODUCTS, withKey(overlapping.body.key))).status).toBe(200);
  // Leaked: rotated with no overlap, the key stops now.
  const replaced = await call('POST', `/v1/api-keys/${overlapping.body.id}/rotation`, { token: owner.token, body: { overlapSeconds: 0 } });
  expect(replaced.status).toBe(201);
  expect((await call('GET', STOCKED_PRODUCTS, withKey(overlapping.body.key))).status).toBe(401);
  expect((await call('GET', STOCKED_PRODUCTS, withKey(replaced.body.key))).status).toBe(200);
});
