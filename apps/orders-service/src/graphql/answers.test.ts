// REST and GraphQL answer an order from one mapper (representation.ts). This holds them to one
// field list: every field of the representation is in schema.graphql under its name unless
// declared REST-only below (with why), every field of the SDL comes from the representation
// unless declared graph-only (with what answers it), and the subgraph answers each shared field
// with REST's value, never a silent null. With the compiler's checks (columns → record in
// orders/repository.ts, record → representation in representation.ts) and the OpenAPI check
// (`node tools/openapi/generate.mjs --check`: representation → document), a field added to one
// layer and not the next fails a check (docs/adding-a-field.md).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'graphql';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { apiClient, expectedFields, type FieldDifferences, sdlFields, tokenFor } from '@platform/test-kit';
import { PrismaClient } from '../generated/prisma/client';
import { orderItemRepresentation, orderRepresentation, shipmentRepresentation } from '../orders/representation';
import { createOrderBody, patchOrderBody } from '../orders/schemas';
import { type OrdersWithFakes, startOrdersWithFakes } from '../testing/fakes';

/** The differences between REST's and the graph's order, each on purpose. */
const declared = {
  Order: {
    restOnly: {
      orderId: 'the same as id, kept for REST clients of the first version',
      userId: 'the graph links the user instead (user, a reference the users subgraph resolves)',
      amountDetail: 'REST include=amountDetail only',
    },
    graphOnly: {
      user: 'Order.user resolves the representation’s userId to a User reference',
      shipment: 'toOrderNode adds toShipmentResponse (REST: /orders/{id}/shipment)',
      version: 'toOrderNode adds the row’s version (REST: the ETag)',
    },
  },
  OrderItem: {
    restOnly: { orderId: 'the graph reaches an item through its order', productId: 'the graph links the product instead (product)' },
    graphOnly: { product: 'OrderItem.product resolves the representation’s productId to a Product reference' },
  },
  Shipment: {
    restOnly: { orderId: 'the graph reaches a shipment through its order' },
    graphOnly: {},
  },
  CreateOrderInput: { restOnly: {}, graphOnly: {} },
  UpdateOrderInput: { restOnly: {}, graphOnly: {} },
} as const satisfies Record<string, FieldDifferences>;

const sdl = parse(readFileSync(path.join(__dirname, 'schema.graphql'), 'utf8'));

describe('one field list for REST and GraphQL', () => {
  it.each([
    ['Order', orderRepresentation, declared.Order],
    ['OrderItem', orderItemRepresentation, declared.OrderItem],
    ['Shipment', shipmentRepresentation, declared.Shipment],
    ['CreateOrderInput', createOrderBody, declared.CreateOrderInput],
    ['UpdateOrderInput', patchOrderBody, declared.UpdateOrderInput],
  ] as const)('schema.graphql %s has the representation’s fields, but for the declared differences', (typeName, shape, differences) => {
    expect(sdlFields(sdl, typeName)).toEqual(expectedFields(shape, differences));
  });
});

describe('the subgraph answers what REST answers', () => {
  const JWT_SECRET = 'orders-answers-secret-orders-answers-0123';
  let database: Database<PrismaClient>;
  let orders: OrdersWithFakes;
  const call = apiClient(() => orders.server.url);

  beforeAll(async () => {
    database = await openTestDatabase({ service: 'orders_answers', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
    orders = await startOrdersWithFakes(database.prisma, { jwtSecret: JWT_SECRET, name: 'orders-answers-test' });
  });

  afterAll(async () => {
    await orders?.stop();
    await database?.close();
  });

  it('for every field the SDL shares with the representation: the same value (a field the resolvers lost would be null)', async () => {
    const alice = await tokenFor(JWT_SECRET);
    const product = orders.catalog.add({ price: 2_500, name: 'Answer Lamp' });
    orders.inventory.stock.set(product.sku, 10);
    const placed = await call('POST', '/orders', { token: alice.token, body: { items: [{ productId: product.id, quantity: 2 }], couponCode: 'SAME-1' } });
    expect(placed.status).toBe(201);
    const rest = (await call('GET', `/orders/${placed.body.id}`, { token: alice.token })).body;
    const shipment = (await call('GET', `/orders/${placed.body.id}/shipment`, { token: alice.token })).body;
    // Every leaf the SDL declares, so a field added to the SDL is asked for here without editing this test.
    const shared = (typeName: 'Order' | 'OrderItem' | 'Shipment') => sdlFields(sdl, typeName).filter((field) => !(field in declared[typeName].graphOnly));
    const query = `query($id: ID!) { order(id: $id) { ${shared('Order').filter((field) => field !== 'items').join(' ')} version user { id } shipment { ${shared('Shipment').join(' ')} } items { ${shared('OrderItem').join(' ')} product { id } } } }`;
    const graph = await call('POST', '/graphql', { token: alice.token, body: { query, variables: { id: placed.body.id } } });
    expect(graph.body.errors).toBeUndefined();
    const order = graph.body.data.order;
    const pick = (from: Record<string, unknown>, fields: string[]) => Object.fromEntries(fields.map((field) => [field, from[field]]));
    const orderFields = shared('Order').filter((field) => field !== 'items');
    expect(pick(order, orderFields)).toEqual(pick(rest, orderFields));
    expect(order.items.map((item: Record<string, unknown>) => pick(item, shared('OrderItem')))).toEqual(rest.items.map((item: Record<string, unknown>) => pick(item, shared('OrderItem'))));
    expect(pick(order.shipment, shared('Shipment'))).toEqual(pick(shipment, shared('Shipment')));
    // The graph's own parts, from the row and the representation's ids.
    expect([order.version, order.user, order.items.map((item: { product: unknown }) => item.product)]).toEqual([1, { id: alice.userId }, [{ id: product.id }]]);
  });
});
