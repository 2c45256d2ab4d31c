// The fake inventory orders-service's tests run on keeps the stock rules inventory-service's real
// server keeps: the same cases (libs/inventory-contract testing.ts) run against both.
import { createInventoryClient, type InventoryGateway } from '@platform/inventory-contract';
import { describeInventoryRules } from '@platform/inventory-contract/testing';
import { FakeInventory } from './fakes';

const inventory = new FakeInventory();
let client: InventoryGateway;
let skus = 0;

beforeAll(async () => {
  client = createInventoryClient(await inventory.start());
});

afterAll(() => {
  client?.close();
  inventory.stop();
});

describeInventoryRules('the fake in orders-service', () => ({
  client,
  stocked: async (onHand) => {
    const sku = `FAKE-${++skus}`;
    inventory.stock.set(sku, onHand);
    return sku;
  },
  levels: async (sku) => ({ available: inventory.stock.get(sku) ?? 0, reserved: inventory.held(sku) }),
}));
