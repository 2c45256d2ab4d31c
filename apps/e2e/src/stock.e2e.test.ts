// Stock through the gateway: an admin creates a product, sets its stock, and it becomes orderable;
// anyone signed in reads stock levels.
import { apiClient } from '@platform/test-kit';
import { useContract } from './contract';
import { gatewayUrl, stackState } from './stack';

const call = apiClient(() => gatewayUrl, useContract(__filename).onResponse);

/** A new customer's access token. */
async function signedUpCustomer(name: string): Promise<string> {
  const email = `${name.toLowerCase().replace(/\W+/g, '-')}-${Date.now()}@example.com`;
  await call('POST', '/v1/users', { body: { name, email, password: 'stock-password-1' } });
  return (await call('POST', '/v1/tokens', { body: { email, password: 'stock-password-1' } })).body.accessToken as string;
}

it('makes a product an admin created orderable once its stock is set, and shows what orders hold', async () => {
  const admin = stackState().adminToken;
  const customer = await signedUpCustomer('Stock Buyer');

  const sku = `E2E-STOCK-${Date.now()}`;
  const product = await call('POST', '/v1/products', { token: admin, body: { name: 'Freshly listed', sku, price: 5_000 } });
  expect(product.status).toBe(201);
  const order = { items: [{ productId: product.body.id, quantity: 2 }] };
  expect((await call('POST', '/v1/orders', { token: customer, body: order })).body.code).toBe('OUT_OF_STOCK');
  expect((await call('GET', `/v1/stock-levels/${sku}`, { token: customer })).status).toBe(404);

  expect((await call('PUT', `/v1/stock-levels/${sku}`, { token: customer, body: { onHand: 10 } })).status).toBe(403);
  const stocked = await call('PUT', `/v1/stock-levels/${sku}`, { token: admin, body: { onHand: 10 } });
  expect([stocked.status, stocked.body]).toEqual([201, { sku, onHand: 10, reserved: 0, available: 10, updatedAt: expect.any(String) }]);

  const placed = await call('POST', '/v1/orders', { token: customer, body: order });
  expect(placed.status).toBe(201);
  const level = await call('GET', `/v1/stock-levels/${sku}`, { token: customer });
  expect([level.status, level.body]).toEqual([200, expect.objectContaining({ onHand: 10, reserved: 2, available: 8 })]);
  expect(level.headers.get('etag')).toMatch(/^"\d+"$/);
  // The graph answers the same availability, from inventory (the fourth subgraph).
  const graph = await call('POST', '/v1/graphql', { token: customer, body: { query: `{ product(id: "${product.body.id}") { name sku availableQuantity } }` } });
  expect(graph.body).toEqual({ data: { product: { name: 'Freshly listed', sku, availableQuantity: 8 } }, extensions: { cost: { requested: 5, limit: 5_000 } } });
  const listed = await call('GET', `/v1/stock-levels?sku=${sku},KB-MECH-001`, { token: customer });
  expect(listed.body.items.map((item: { sku: string }) => item.sku)).toEqual([sku, 'KB-MECH-001']); // SKU order
});

it('lets an order holding the whole shelf lower its quantity (PUT), and gives back the unit no longer ordered', async () => {
  const admin = stackState().adminToken;
  const customer = await signedUpCustomer('Shelf Buyer');
  const sku = `E2E-SHELF-${Date.now()}`;
  const product = await call('POST', '/v1/products', { token: admin, body: { name: 'Last two on the shelf', sku, price: 5_000 } });
  expect((await call('PUT', `/v1/stock-levels/${sku}`, { token: admin, body: { onHand: 2 } })).status).toBe(201);
  const placed = await call('POST', '/v1/orders', { token: customer, body: { items: [{ productId: product.body.id, quantity: 2 }] } });
  expect(placed.status).toBe(201);

  const lowered = await call('PUT', `/v1/orders/${placed.body.id}`, { token: customer, body: { items: [{ productId: product.body.id, quantity: 1 }] } });
  expect([lowered.status, lowered.body.amount, lowered.body.items.map((item: { quantity: number }) => item.quantity)]).toEqual([200, 5_000, [1]]);
  const level = async () => (await call('GET', `/v1/stock-levels/${sku}`, { token: customer })).body;
  expect(await level()).toMatchObject({ onHand: 2, reserved: 1, available: 1 });
  // Back to two: the unit given back is free again, so it fits.
  expect((await call('PUT', `/v1/orders/${placed.body.id}`, { token: customer, body: { items: [{ productId: product.body.id, quantity: 2 }] } })).status).toBe(200);
  expect(await level()).toMatchObject({ onHand: 2, reserved: 2, available: 0 });
});
