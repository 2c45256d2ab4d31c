// stock.changed: recorded by the transaction that moves a SKU's available stock across the
// low-stock threshold (10), whichever call moved it, and only then.
import path from 'node:path';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { fromCloudEventJson, toCloudEvent } from '@platform/events';
import { PrismaClient } from '../generated/prisma/client';
import { StockRepository } from './repository';
import { StockService } from './service';

let database: Database<PrismaClient>;
let stock: StockService;

beforeAll(async () => {
  database = await openTestDatabase({ service: 'inventory_events', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  stock = new StockService(new StockRepository(database.prisma));
});

afterAll(() => database?.close());

const eventsOf = (sku: string) => database.prisma.outboxEvent.findMany({ where: { aggregateType: 'stock', aggregateId: sku }, orderBy: { position: 'asc' } });

it('records stock.changed when available stock falls below the threshold and when it comes back, not in between', async () => {
  const sku = `LOW-${Date.now()}`;
  await stock.setStock({ sku, onHand: 12, requestId: `${sku}-set` });
  await stock.reserve({ orderId: `${sku}-order-1`, sku, quantity: 2 }); // 10: not below yet
  expect(await eventsOf(sku)).toEqual([]);
  await stock.reserve({ orderId: `${sku}-order-2`, sku, quantity: 1 }); // 9: crossed down
  await stock.adjustStock({ sku, delta: -4, reason: 'damaged', requestId: `${sku}-adjust` }); // 5: still low
  await stock.release(`${sku}-order-2`); // 6
  await stock.setStock({ sku, onHand: 30, requestId: `${sku}-restock` }); // 28 available: crossed up

  const events = await eventsOf(sku);
  expect(events.map((event) => [event.type, event.sequence, event.data])).toEqual([
    ['stock.changed', 1, { sku, available: 9, reserved: 3, lowStockThreshold: 10, low: true }],
    ['stock.changed', 2, { sku, available: 28, reserved: 2, lowStockThreshold: 10, low: false }],
  ]);
  // What the trigger wrote is a valid event of its type.
  const [first] = events;
  const json = toCloudEvent('/inventory-service', { ...first, sequence: first.sequence }).toJSON() as Record<string, unknown>;
  expect(fromCloudEventJson(json)).toMatchObject({ type: 'stock.changed', aggregateId: sku, sequence: 1 });
});
