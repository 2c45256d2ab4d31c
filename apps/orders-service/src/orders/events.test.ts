// The events orders-service records: each change to an order records one event in the unit of
// work that makes it, whichever door the change came through (REST, GraphQL, the cancellation
// worker), and a change that does not happen records none.
import path from 'node:path';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { EventConsumer, type EventTransport, fromCloudEventJson, toCloudEvent } from '@platform/events';
import { newId } from '@platform/ids';
import { createLogger, type Listening } from '@platform/service-kit';
import { apiClient, clockMovingOnDelete, tokenFor, whileClockMoves } from '@platform/test-kit';
import type { createOrdersApp } from '../app';
import { PrismaClient } from '../generated/prisma/client';
import { type FakeCatalog, type FakeInventory, type OrdersWithFakes, startOrdersWithFakes } from '../testing/fakes';
import { DeletedUsers } from '../users/deleted-users';
import { OrderRepository } from './repository';
import type { OrderStatus } from './status';

const JWT_SECRET = 'orders-events-secret-orders-events-012345';
let database: Database<PrismaClient>;
let catalog: FakeCatalog;
let inventory: FakeInventory;
let orders: OrdersWithFakes;
let server: Listening;
let built: Awaited<ReturnType<typeof createOrdersApp>>;
const call = apiClient(() => server.url);
let admin: string;
let alice: { token: string; userId: string };

beforeAll(async () => {
  database = await openTestDatabase({ service: 'orders_events', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  admin = (await tokenFor(JWT_SECRET, 'admin')).token;
  alice = await tokenFor(JWT_SECRET);
  orders = await startOrdersWithFakes(database.prisma, { jwtSecret: JWT_SECRET, name: 'orders-events-test' });
  ({ built, server, catalog, inventory } = orders);
});

afterAll(async () => {
  await orders?.stop();
  await database?.close();
});

async function newOrder(quantity = 1) {
  const product = catalog.add({ price: 12_000, name: 'Desk Lamp' });
  inventory.stock.set(product.sku, 100);
  const res = await call('POST', '/orders', { token: alice.token, body: { items: [{ productId: product.id, quantity }] } });
  expect(res.status).toBe(201);
  return res.body as { id: string; version: number };
}

const eventsOf = async (orderId: string) => (await database.prisma.outboxEvent.findMany({ where: { aggregateId: orderId }, orderBy: { position: 'asc' } })).map((event) => ({ type: event.type, sequence: event.sequence, data: event.data as Record<string, unknown> }));
const graphql = (query: string, token: string, variables?: Record<string, unknown>) => call('POST', '/graphql', { token, body: { query, variables } });

it('placing, confirming, shipping and delivering record one event each, numbered in order, with the order as it became', async () => {
  const order = await newOrder(2);
  expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'CONFIRMED' } })).status).toBe(200);
  expect((await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'SHIPPED', carrier: 'CJ', trackingNumber: '1234' } })).status).toBe(200);
  // Only the carrier changes: no status moved, no event.
  expect((await call('PUT', `/orders/${order.id}/shipment`, { token: admin, body: { status: 'SHIPPED', carrier: 'Hanjin', trackingNumber: '1234' } })).status).toBe(200);
  expect((await call('PATCH', `/orders/${order.id}`, { token: admin, body: { status: 'DELIVERED' } })).status).toBe(200);

  const events = await eventsOf(order.id);
  expect(events.map((event) => [event.type, event.sequence])).toEqual([
    ['order.created', 1],
    ['order.confirmed', 2],
    ['order.shipped', 3],
    ['order.delivered', 4],
  ]);
  expect(events[0].data).toMatchObject({ id: order.id, userId: alice.userId, status: 'PENDING', amount: 24_000, currency: 'KRW', items: [{ productName: 'Desk Lamp', quantity: 2, unitPrice: 12_000 }] });
  expect(events.map((event) => event.data.status)).toEqual(['PENDING', 'CONFIRMED', 'SHIPPED', 'DELIVERED']);
});

it("order.created happened exactly when the order was created: its time is the order's createdAt, one clock reading", async () => {
  // The event's time (a webhook's `timestamp`, the CloudEvent's `time`) was the transaction's
  // start, milliseconds before the createdAt the order was written with.
  const product = catalog.add({ price: 3_000 });
  inventory.stock.set(product.sku, 10);
  const input = { items: [{ productId: product.id, quantity: 1 }] };
  const placed: { id: string; createdAt: string }[] = [];
  for (let i = 0; i < 3; i++) placed.push((await call('POST', '/orders', { token: alice.token, body: input })).body as { id: string; createdAt: string });
  const viaGraphql = await graphql('mutation($input: CreateOrderInput!) { createOrder(input: $input) { id createdAt } }', alice.token, { input });
  placed.push(viaGraphql.body.data.createOrder as { id: string; createdAt: string });
  for (const order of placed) {
    const [event] = await database.prisma.outboxEvent.findMany({ where: { aggregateId: order.id, type: 'order.created' } });
    const row = await database.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
    expect([event.occurredAt.toISOString(), (event.data as { createdAt: string }).createdAt, row.createdAt.toISOString()]).toEqual([order.createdAt, order.createdAt, order.createdAt]);
  }
});

it("every change's event happened exactly when the order says it changed: its time is the updatedAt the change wrote", async () => {
  // Each event's time (a webhook's `timestamp`) was the transaction's start, milliseconds before
  // the updatedAt Prisma wrote: a receiver comparing the two saw the event before the change.
  const lastEventTime = async (orderId: string) => (await database.prisma.outboxEvent.findFirstOrThrow({ where: { aggregateId: orderId }, orderBy: { position: 'desc' } })).occurredAt.toISOString();
  const changedAt = async (orderId: string) => {
    const res = await call('GET', `/orders/${orderId}`, { token: admin });
    const row = await database.prisma.order.findUniqueOrThrow({ where: { id: orderId } });
    expect(row.updatedAt.toISOString()).toBe(res.body.updatedAt);
    return res.body.updatedAt as string;
  };
  const shipped = await newOrder();
  const replacement = catalog.add({ price: 1_000 });
  inventory.stock.set(replacement.sku, 10);
  const moves: [string, () => Promise<{ status: number }>][] = [
    ['order.updated', () => call('PATCH', `/orders/${shipped.id}`, { token: alice.token, body: { couponCode: 'TIME-1' } })],
    ['order.updated', () => call('PUT', `/orders/${shipped.id}`, { token: alice.token, body: { items: [{ productId: replacement.id, quantity: 1 }] } })],
    ['order.confirmed', () => call('PATCH', `/orders/${shipped.id}`, { token: admin, body: { status: 'CONFIRMED' } })],
    ['order.shipped', () => call('PUT', `/orders/${shipped.id}/shipment`, { token: admin, body: { status: 'SHIPPED', carrier: 'CJ' } })],
    ['order.delivered', () => call('PATCH', `/orders/${shipped.id}`, { token: admin, body: { status: 'DELIVERED' } })],
  ];
  for (const [type, move] of moves) {
    expect((await move()).status).toBe(200);
    const [event] = await database.prisma.outboxEvent.findMany({ where: { aggregateId: shipped.id }, orderBy: { position: 'desc' }, take: 1 });
    expect([event.type, event.occurredAt.toISOString()]).toEqual([type, await changedAt(shipped.id)]);
  }
  const shipment = await database.prisma.shipment.findUniqueOrThrow({ where: { orderId: shipped.id } });
  expect(shipment.shippedAt?.toISOString()).toBe((await database.prisma.outboxEvent.findFirstOrThrow({ where: { aggregateId: shipped.id, type: 'order.shipped' } })).occurredAt.toISOString());

  const canceled = await newOrder();
  expect((await call('PATCH', `/orders/${canceled.id}`, { token: alice.token, body: { status: 'CANCELED' } })).status).toBe(200);
  const row = await database.prisma.order.findUniqueOrThrow({ where: { id: canceled.id } });
  expect([await lastEventTime(canceled.id), row.canceledAt?.toISOString()]).toEqual([await changedAt(canceled.id), await changedAt(canceled.id)]);

  const byJob = await newOrder();
  expect((await call('POST', `/orders/${byJob.id}/cancellation`, { token: alice.token, body: {} })).status).toBe(202);
  await built.sweeper.sweep();
  const completion = await database.prisma.outboxEvent.findFirstOrThrow({ where: { aggregateId: byJob.id, type: 'order.cancellation.completed' } });
  const cancellation = await database.prisma.cancellation.findUniqueOrThrow({ where: { orderId: byJob.id } });
  expect(completion.occurredAt.toISOString()).toBe(cancellation.completedAt?.toISOString());
});

it('a coupon change and new items record order.updated; a refused change records nothing', async () => {
  const order = await newOrder();
  expect((await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { couponCode: 'SPRING-5' } })).status).toBe(200);
  const product = catalog.add({ price: 5_000 });
  inventory.stock.set(product.sku, 10);
  expect((await call('PUT', `/orders/${order.id}`, { token: alice.token, body: { items: [{ productId: product.id, quantity: 3 }] } })).status).toBe(200);
  expect((await call('PATCH', `/orders/${order.id}`, { token: alice.token, headers: { 'if-match': '"1"' }, body: { couponCode: 'LATE-1' } })).status).toBe(412);
  expect((await call('PATCH', `/orders/${order.id}`, { token: alice.token, body: { status: 'SHIPPED' } })).status).toBe(403);
  expect((await eventsOf(order.id)).map((event) => [event.type, event.sequence, event.data.amount])).toEqual([
    ['order.created', 1, 12_000],
    ['order.updated', 2, 12_000],
    ['order.updated', 3, 15_000],
  ]);
});

it('placing through REST and through GraphQL createOrder record the same order.created', async () => {
  const product = catalog.add({ price: 6_000, name: 'Tea Tin' });
  inventory.stock.set(product.sku, 10);
  const input = { items: [{ productId: product.id, quantity: 2 }], couponCode: 'PARITY-1' };
  const viaRest = (await call('POST', '/orders', { token: alice.token, body: input })).body as { id: string };
  const viaGraphql = await graphql('mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }', alice.token, { input });
  const graphqlId = viaGraphql.body.data.createOrder.id as string;
  const recorded = async (orderId: string) =>
    (await eventsOf(orderId)).map((event) => {
      const { id, createdAt, items, ...rest } = event.data as { id: string; createdAt: string; items: { id: string }[] };
      expect([id, typeof createdAt]).toEqual([orderId, 'string']);
      return [event.type, event.sequence, { ...rest, items: items.map(({ id: itemId, ...item }) => (expect(typeof itemId).toBe('string'), item)) }];
    });
  const fromRest = await recorded(viaRest.id);
  expect(fromRest).toEqual([
    ['order.created', 1, { userId: alice.userId, status: 'PENDING', amount: 12_000, currency: 'KRW', couponCode: 'PARITY-1', version: 1, items: [{ productId: product.id, sku: product.sku, productName: 'Tea Tin', quantity: 2, unitPrice: 6_000, amount: 12_000 }] }],
  ]);
  expect(await recorded(graphqlId)).toEqual(fromRest);
});

it('canceling through REST and through GraphQL record the same order.canceled', async () => {
  const viaRest = await newOrder();
  const viaGraphql = await newOrder();
  expect((await call('PATCH', `/orders/${viaRest.id}`, { token: alice.token, body: { status: 'CANCELED' } })).status).toBe(200);
  const res = await graphql('mutation($id: ID!) { cancelOrder(id: $id) { id status } }', alice.token, { id: viaGraphql.id });
  expect(res.body.data.cancelOrder.status).toBe('CANCELED');
  // Already canceled: refused, nothing recorded.
  expect((await call('PATCH', `/orders/${viaRest.id}`, { token: alice.token, body: { status: 'CANCELED' } })).status).toBe(409);
  for (const id of [viaRest.id, viaGraphql.id]) {
    expect((await eventsOf(id)).map((event) => [event.type, event.sequence, event.data.status])).toEqual([
      ['order.created', 1, 'PENDING'],
      ['order.canceled', 2, 'CANCELED'],
    ]);
  }
});

it("the cancellation job records order.canceled and, when it completes, its completion", async () => {
  const order = await newOrder();
  expect((await call('POST', `/orders/${order.id}/cancellation`, { token: alice.token, body: { reason: 'changed my mind' } })).status).toBe(202);
  await built.sweeper.sweep();
  const cancellation = (await call('GET', `/orders/${order.id}/cancellation`, { token: alice.token })).body;
  expect(cancellation.status).toBe('COMPLETED');
  const events = await eventsOf(order.id);
  expect(events.map((event) => event.type)).toEqual(['order.created', 'order.canceled', 'order.cancellation.completed']);
  expect(events[2].data).toEqual({ cancellationId: cancellation.id, orderId: order.id, outcome: 'canceled', refundAmount: 12_000 });
  await built.sweeper.sweep();
  expect(await eventsOf(order.id)).toHaveLength(3);
});

it('deleting records order.deleted; a delete at a stale version records nothing', async () => {
  const order = await newOrder();
  expect((await call('DELETE', `/orders/${order.id}`, { token: alice.token, headers: { 'if-match': '"7"' } })).status).toBe(412);
  expect((await call('DELETE', `/orders/${order.id}`, { token: alice.token })).status).toBe(204);
  expect(await eventsOf(order.id)).toEqual([
    { type: 'order.created', sequence: 1, data: expect.any(Object) },
    { type: 'order.deleted', sequence: 2, data: { id: order.id, userId: alice.userId } },
  ]);
});

it('order.deleted happens when the row went, at a clock reading of the app as every order event, not at its transaction start', async () => {
  // Every other order event takes the app's clock reading its change wrote as updatedAt; the
  // transaction's start (the outbox's default) is the database's clock and earlier than the
  // deletion. Here the clock moves on while the DELETE statement runs, as during a lock wait.
  const order = await newOrder();
  const waiting = clockMovingOnDelete(database.prisma, 'order');
  const second = await startOrdersWithFakes(waiting.prisma, { jwtSecret: JWT_SECRET, name: 'orders-events-waiting' });
  try {
    expect(await whileClockMoves(async () => (await apiClient(() => second.server.url)('DELETE', `/orders/${order.id}`, { token: alice.token })).status)).toBe(204);
  } finally {
    await second.stop();
  }
  const deleted = await database.prisma.outboxEvent.findFirstOrThrow({ where: { aggregateId: order.id, type: 'order.deleted' } });
  expect(deleted.occurredAt.getTime()).toBeGreaterThanOrEqual(waiting.movedTo().getTime());
});

it('an order refused for want of stock records nothing', async () => {
  const before = await database.prisma.outboxEvent.count();
  const product = catalog.add();
  inventory.stock.set(product.sku, 1);
  expect((await call('POST', '/orders', { token: alice.token, body: { items: [{ productId: product.id, quantity: 5 }] } })).status).toBe(409);
  expect(await database.prisma.outboxEvent.count()).toBe(before);
});

describe('user.deleted, consumed', () => {
  const userDeleted = (userId: string, sequence = 3) =>
    toCloudEvent('/users-service', { id: newId(), type: 'user.deleted', aggregateType: 'user', aggregateId: userId, sequence, data: { id: userId }, occurredAt: new Date() }).toJSON() as Record<string, unknown>;

  it("cancels the user's open orders (stock back), keeps the others without the link to them, and a redelivery changes nothing", async () => {
    const leaving = await tokenFor(JWT_SECRET);
    const product = catalog.add({ price: 7_000, name: 'Notebook' });
    inventory.stock.set(product.sku, 10);
    const place = async () => (await call('POST', '/orders', { token: leaving.token, body: { items: [{ productId: product.id, quantity: 2 }] } })).body as { id: string };
    const open = await place();
    const shipped = await place();
    expect((await call('PATCH', `/orders/${shipped.id}`, { token: admin, body: { status: 'CONFIRMED' } })).status).toBe(200);
    expect((await call('PUT', `/orders/${shipped.id}/shipment`, { token: admin, body: { status: 'SHIPPED' } })).status).toBe(200);
    expect(inventory.stock.get(product.sku)).toBe(6);

    const consumer = new EventConsumer(database.prisma, { kind: 'embedded' } as EventTransport, createLogger('consumer-test', 'silent'), { consumer: 'orders-service', sources: ['users-service'], handlers: built.eventHandlers });
    const event = userDeleted(leaving.userId);
    expect(await consumer.deliver({ event, attempt: 1 })).toBe('handled');

    const openNow = await call('GET', `/orders/${open.id}`, { token: admin });
    expect([openNow.body.status, openNow.body.userId]).toEqual(['CANCELED', null]);
    expect(inventory.stock.get(product.sku)).toBe(8); // the open order's 2 came back; the shipped one's did not
    const shippedNow = await call('GET', `/orders/${shipped.id}`, { token: admin });
    expect(shippedNow.body).toMatchObject({ status: 'SHIPPED', userId: null, amount: 14_000, items: [{ productId: product.id, unitPrice: 7_000 }] });
    // GraphQL: the user is null, not an error.
    const graph = await graphql('query($id: ID!) { order(id: $id) { id status user { id } } }', admin, { id: shipped.id });
    expect(graph.body).toEqual({ data: { order: { id: shipped.id, status: 'SHIPPED', user: null } } });
    // The orders are no longer the (deleted) user's to read.
    expect((await call('GET', `/orders/${shipped.id}`, { token: leaving.token })).status).toBe(404);
    expect((await eventsOf(open.id)).map((recorded) => recorded.type)).toEqual(['order.created', 'order.canceled', 'order.unlinked']);
    // order.unlinked happened at the updatedAt the unlinking wrote, one reading for every order it unlinked.
    for (const id of [open.id, shipped.id]) {
      const unlinked = await database.prisma.outboxEvent.findFirstOrThrow({ where: { aggregateId: id, type: 'order.unlinked' } });
      expect(unlinked.occurredAt.toISOString()).toBe((await database.prisma.order.findUniqueOrThrow({ where: { id } })).updatedAt.toISOString());
    }
    // The unlinking is a change like any other: each order records order.unlinked, the order as it became.
    const shippedEvents = await eventsOf(shipped.id);
    expect(shippedEvents.map((recorded) => recorded.type)).toEqual(['order.created', 'order.confirmed', 'order.shipped', 'order.unlinked']);
    expect(shippedEvents.at(-1)).toEqual({ type: 'order.unlinked', sequence: 4, data: expect.objectContaining({ id: shipped.id, userId: null, status: 'SHIPPED' }) });
    expect(shippedEvents.at(-1)!.data.version).toBeGreaterThan(shippedEvents.at(-2)!.data.version as number);

    const before = await database.prisma.outboxEvent.count();
    expect(await consumer.deliver({ event, attempt: 2 })).toBe('duplicate');
    // Even handled again by hand (a crash before it was recorded as handled), nothing changes.
    await built.eventHandlers['user.deleted']?.(fromCloudEventJson(userDeleted(leaving.userId, 4)));
    expect(await database.prisma.outboxEvent.count()).toBe(before);
    expect(inventory.stock.get(product.sku)).toBe(8);
  });
});

describe('user.deleted racing a placement', () => {
  /** The repository, with `between` run after the user's open orders were looked up and before they are canceled. */
  class PlacingInBetween extends OrderRepository {
    constructor(
      prisma: PrismaClient,
      private readonly between: () => Promise<void>,
    ) {
      super(prisma);
    }

    override async idsOfUser(userId: string, statuses: OrderStatus[]): Promise<string[]> {
      const ids = await super.idsOfUser(userId, statuses);
      await this.between();
      return ids;
    }
  }

  it('an order placed after the open orders were looked up is refused (401) and its stock goes back: no open order is left without its user', async () => {
    const leaving = await tokenFor(JWT_SECRET);
    const product = catalog.add({ price: 3_000 });
    inventory.stock.set(product.sku, 10);
    const place = (quantity: number) => call('POST', '/orders', { token: leaving.token, body: { items: [{ productId: product.id, quantity }] } });
    const open = (await place(1)).body as { id: string };
    let late: Awaited<ReturnType<typeof place>> | undefined;
    const deletedUsers = new DeletedUsers(
      new PlacingInBetween(database.prisma, async () => {
        late = await place(3);
      }),
      built.orders.cancelOrder,
    );

    expect(await deletedUsers.forget(leaving.userId)).toEqual({ canceled: 1, unlinked: 1 });

    expect([late?.status, late?.body.code, late?.body.message]).toEqual([401, 'UNAUTHENTICATED', 'The account of this access token no longer exists.']);
    const ordersOfProduct = await database.prisma.order.findMany({ where: { items: { some: { productId: product.id } } }, select: { id: true, status: true, userId: true } });
    expect(ordersOfProduct).toEqual([{ id: open.id, status: 'CANCELED', userId: null }]);
    expect([inventory.stock.get(product.sku), inventory.held(product.sku)]).toEqual([10, 0]);
    // Later placements, through GraphQL too, are refused the same way.
    expect((await place(1)).status).toBe(401);
    const viaGraphql = await graphql('mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }', leaving.token, { input: { items: [{ productId: product.id, quantity: 1 }] } });
    expect(viaGraphql.body.errors[0]).toMatchObject({ path: ['createOrder'], extensions: { code: 'UNAUTHENTICATED' } });
    expect(inventory.stock.get(product.sku)).toBe(10);
  });
});

describe('product.deleted (the catalog no longer has the product)', () => {
  it('refuses to order or re-price with it (422 naming the item), and orders already placed keep its name and price in REST and GraphQL', async () => {
    const product = catalog.add({ price: 4_500, name: 'Retired Kettle' });
    inventory.stock.set(product.sku, 10);
    const placed = (await call('POST', '/orders', { token: alice.token, body: { items: [{ productId: product.id, quantity: 2 }] } })).body as { id: string };
    const other = await newOrder();
    // The catalog deletes it (and records product.deleted): its product lookups no longer list it.
    catalog.products.delete(product.id);
    const before = await database.prisma.outboxEvent.count();

    const refused = await call('POST', '/orders', { token: alice.token, body: { items: [{ productId: product.id, quantity: 1 }] } });
    expect([refused.status, refused.body.code, refused.body.errors]).toEqual([422, 'VALIDATION_FAILED', [{ field: 'items[0].productId', code: 'NOT_ALLOWED', message: `No product ${product.id}.` }]]);
    const viaGraphql = await graphql('mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }', alice.token, { input: { items: [{ productId: product.id, quantity: 1 }] } });
    expect(viaGraphql.body.errors[0]).toMatchObject({ path: ['createOrder'], extensions: { code: 'VALIDATION_FAILED', errors: [{ field: 'input.items[0].productId', code: 'NOT_ALLOWED' }] } });
    const repriced = await call('PUT', `/orders/${other.id}`, { token: alice.token, body: { items: [{ productId: product.id, quantity: 1 }] } });
    expect([repriced.status, repriced.body.errors?.[0]?.field]).toEqual([422, 'items[0].productId']);
    // Nothing was written, nothing reserved.
    expect(await database.prisma.outboxEvent.count()).toBe(before);
    expect(inventory.stock.get(product.sku)).toBe(8);

    const rest = await call('GET', `/orders/${placed.id}`, { token: alice.token });
    expect(rest.body).toMatchObject({ amount: 9_000, items: [{ productId: product.id, sku: product.sku, productName: 'Retired Kettle', quantity: 2, unitPrice: 4_500, amount: 9_000 }] });
    const item = await call('GET', `/order-items/${rest.body.items[0].id}`, { token: alice.token });
    expect(item.body).toMatchObject({ productName: 'Retired Kettle', unitPrice: 4_500 });
    const graph = await graphql('query($id: ID!) { order(id: $id) { amount items { productName quantity unitPrice amount } } }', alice.token, { id: placed.id });
    expect(graph.body).toEqual({ data: { order: { amount: 9_000, items: [{ productName: 'Retired Kettle', quantity: 2, unitPrice: 4_500, amount: 9_000 }] } } });
  });
});
