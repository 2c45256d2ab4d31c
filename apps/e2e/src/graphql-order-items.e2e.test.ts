// GraphQL's view of an order of several products, and its update, through the gateway as a client
// app sends them (the trusted documents order-items.graphql and update-order.graphql): every line
// with its product in one request that asks the catalog once, whatever the number of lines, and
// updateOrder keeping REST PATCH's version check.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { apiClient, stackPorts } from '@platform/test-kit';
import { useContract } from './contract';
import { gatewayUrl, PORT_OFFSET, STOCKED_PRODUCTS } from './stack';

const call = apiClient(() => gatewayUrl, useContract(__filename).onResponse);
const operation = (file: string) => readFileSync(path.join(__dirname, '../../gateway/src/graphql/operations', file), 'utf8');
const trusted = (file: string) => ({ persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(operation(file)).digest('hex') } });

/** How many GraphQL requests the catalog has answered (its /metrics). */
async function catalogGraphqlRequests(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${stackPorts(PORT_OFFSET).catalog}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('http_requests_total{') && line.includes('route="/graphql"'))
    .reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
}

let token: string;
beforeAll(async () => {
  const email = `gql-items-${Date.now()}@example.com`;
  expect((await call('POST', '/v1/users', { body: { name: 'Items Buyer', email, password: 'items-password-1' } })).status).toBe(201);
  token = (await call('POST', '/v1/tokens', { body: { email, password: 'items-password-1' } })).body.accessToken as string;
});

it('answers Order.items (product, quantity, unit price, amount) of a 4-line order with one catalog request', async () => {
  const products = (await call('GET', STOCKED_PRODUCTS, { token })).body.items.slice(0, 4) as { id: string; name: string; price: number }[];
  const placed = await call('POST', '/v1/orders', { token, body: { items: products.map((product, i) => ({ productId: product.id, quantity: i + 1 })) } });
  expect(placed.status).toBe(201);
  const before = await catalogGraphqlRequests();
  const res = await call('POST', '/v1/graphql', { token, body: { variables: { id: placed.body.id }, extensions: trusted('order-items.graphql') } });
  const after = await catalogGraphqlRequests();
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data.order.items).toEqual(
    products.map((product, i) => ({ id: placed.body.items[i].id, quantity: i + 1, unitPrice: product.price, amount: product.price * (i + 1), product: { id: product.id, name: product.name, imageUrl: expect.anything() } })),
  );
  // One entity fetch for the four products, not one per line (the catalog batches them with a DataLoader).
  expect(after - before).toBe(1);
});

it('updates an order at the version read (updateOrder, expectedVersion), and refuses a stale version as REST refuses a stale If-Match', async () => {
  const product = (await call('GET', STOCKED_PRODUCTS, { token })).body.items[0] as { id: string };
  const order = (await call('POST', '/v1/orders', { token, body: { items: [{ productId: product.id, quantity: 1 }] } })).body as { id: string };
  const update = (variables: Record<string, unknown>) => call('POST', '/v1/graphql', { token, body: { variables, extensions: trusted('update-order.graphql') } });
  const stale = await update({ id: order.id, input: { couponCode: 'GRAPH-1' }, expectedVersion: 7 });
  expect([stale.status, stale.body.data, stale.body.errors[0].extensions.code]).toEqual([200, { updateOrder: null }, 'PRECONDITION_FAILED']);
  const staleRest = await call('PATCH', `/v1/orders/${order.id}`, { token, body: { couponCode: 'GRAPH-1' }, headers: { 'if-match': '"7"' } });
  expect([staleRest.status, staleRest.body.code]).toEqual([412, 'PRECONDITION_FAILED']);
  const changed = await update({ id: order.id, input: { couponCode: 'GRAPH-1' }, expectedVersion: 1 });
  expect(changed.body.data.updateOrder).toMatchObject({ id: order.id, status: 'PENDING', version: 2 });
  const read = await call('GET', `/v1/orders/${order.id}`, { token });
  expect([read.body.couponCode, read.headers.get('etag')]).toEqual(['GRAPH-1', '"2"']);
});
