// Tokens do not outlive their account: through the gateway, a token issued before a password
// change, or for a user who deleted itself, is refused within the stated bound (the gateway's
// CREDENTIALS_CACHE_MS, 5 s by default) plus a second of slack; in fact within a second, as the
// revocation is pushed (Redis pub/sub with TEST_REDIS_URL; without, the gateway saw the change pass).
import { apiClient, connects, otherAddresses, stackPorts } from '@platform/test-kit';
import { PORT_OFFSET, STOCKED_PRODUCTS, gatewayUrl } from './stack';
import { useContract } from './contract';

const call = apiClient(() => gatewayUrl, useContract(__filename).onResponse);
const BOUND_MS = 5_000 + 1_000;

async function signUp() {
  const email = `revoke-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const created = await call('POST', '/v1/users', { body: { name: 'Revoked', email, password: 'first-password-1' } });
  expect(created.status).toBe(201);
  const token = (await call('POST', '/v1/tokens', { body: { email, password: 'first-password-1' } })).body.accessToken as string;
  return { id: created.body.id as string, email, token };
}

/** Milliseconds until `token` is refused with 401 on GET /v1/users/me, or throws past the bound. */
async function refusedWithin(token: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    const res = await call('GET', '/v1/users/me', { token });
    if (res.status === 401) {
      expect(res.body.code).toBe('UNAUTHENTICATED');
      return Date.now() - started;
    }
    if (Date.now() - started > BOUND_MS) throw new Error(`token still accepted after ${BOUND_MS} ms (last status ${res.status})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

it('refuses tokens issued before a password change; a new token works', async () => {
  const user = await signUp();
  expect((await call('GET', '/v1/users/me', { token: user.token })).status).toBe(200);
  expect((await call('PATCH', `/v1/users/${user.id}`, { token: user.token, body: { password: 'second-password-2' } })).status).toBe(200);
  expect(await refusedWithin(user.token)).toBeLessThan(1_000);
  const renewed = (await call('POST', '/v1/tokens', { body: { email: user.email, password: 'second-password-2' } })).body.accessToken as string;
  expect((await call('GET', '/v1/users/me', { token: renewed })).status).toBe(200);
});

it('refuses the token of a user who deleted itself: it can no longer place orders', async () => {
  const user = await signUp();
  const productId = (await call('GET', STOCKED_PRODUCTS, { token: user.token })).body.items[0].id as string;
  expect((await call('DELETE', `/v1/users/${user.id}`, { token: user.token })).status).toBe(204);
  expect(await refusedWithin(user.token)).toBeLessThan(1_000);
  const order = await call('POST', '/v1/orders', { token: user.token, body: { items: [{ productId, quantity: 1 }] } });
  expect([order.status, order.body.code]).toEqual([401, 'UNAUTHENTICATED']);
});

it("leaves no way around the gateway's checks on this machine: the services answer on loopback only", async () => {
  // A service checks a token's signature, not its revocation or the gateway's limits; `npm start`
  // binds the services to 127.0.0.1, so another machine reaches only the gateway.
  const others = otherAddresses();
  expect(others.length).toBeGreaterThan(0);
  const { gateway, users, orders, catalog, inventory, grpc } = stackPorts(PORT_OFFSET);
  for (const [name, port] of Object.entries({ users, orders, catalog, inventory, 'inventory gRPC': grpc })) {
    expect([name, await connects('127.0.0.1', port)]).toEqual([name, true]);
    for (const address of others) expect([name, address, await connects(address, port)]).toEqual([name, address, false]);
  }
  for (const address of others) expect(['gateway', address, await connects(address, gateway)]).toEqual(['gateway', address, true]);
});
