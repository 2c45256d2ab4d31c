// @platform/inventory-contract/testing, an entry point of its own so that no app's bundle carries
// it: the stock rules every Inventory server keeps, as jest cases run through the same client
// orders-service uses. inventory-service runs them against its real server (PGlite and
// PostgreSQL), orders-service against the fake its tests run on, so the fake cannot drift from
// the rules it stands in for without a failing test.
import { Conflict, OutOfStock } from '@platform/errors';
import type { InventoryGateway } from './client';

export interface InventoryUnderTest {
  /** A client of the server, made as callers make it (`createInventoryClient`). */
  client: InventoryGateway;
  /** A SKU no case used before, with `onHand` units and nothing reserved. */
  stocked(onHand: number): Promise<string>;
  /** What is available and reserved of `sku`. */
  levels(sku: string): Promise<{ available: number; reserved: number }>;
}

let keys = 0;
/** A reservation key no case used before (servers under test live across cases). */
const key = (name: string) => `rules-${name}-${process.pid}-${++keys}`;

async function refusal(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to be refused');
}

export function describeInventoryRules(name: string, subject: () => InventoryUnderTest): void {
  describe(`Inventory's stock rules (${name})`, () => {
    it('reserves every line of an order or none, and a repeat takes nothing twice', async () => {
      const { client, stocked, levels } = subject();
      const [a, b] = [await stocked(3), await stocked(1)];
      const short = await refusal(client.reserveOrder(key('short'), [{ sku: a, quantity: 1 }, { sku: b, quantity: 2 }]));
      expect(short).toBeInstanceOf(OutOfStock);
      expect((short as OutOfStock).skus).toEqual([b]);
      expect([await levels(a), await levels(b)]).toEqual([{ available: 3, reserved: 0 }, { available: 1, reserved: 0 }]);
      const order = key('order');
      const lines = [{ sku: a, quantity: 2 }, { sku: b, quantity: 1 }];
      expect((await client.reserveOrder(order, lines)).map(({ sku, quantity }) => ({ sku, quantity }))).toEqual(lines);
      await client.reserveOrder(order, lines);
      expect([await levels(a), await levels(b)]).toEqual([{ available: 1, reserved: 2 }, { available: 0, reserved: 1 }]);
      expect(await client.release(order)).toBe(2);
      expect(await client.release(order)).toBe(0);
      expect([await levels(a), await levels(b)]).toEqual([{ available: 3, reserved: 0 }, { available: 1, reserved: 0 }]);
    });

    it("lowers a quantity in place of the order's reservations with none spare; releasing the old order keeps the replacement", async () => {
      const { client, stocked, levels } = subject();
      const [a, b] = [await stocked(2), await stocked(1)];
      const [old, replacement] = [key('old'), key('new')];
      await client.reserveOrder(old, [{ sku: a, quantity: 2 }, { sku: b, quantity: 1 }]);
      expect(await refusal(client.reserveOrder(key('other'), [{ sku: a, quantity: 1 }]))).toBeInstanceOf(OutOfStock);
      await client.reserveOrder(replacement, [{ sku: a, quantity: 1 }], old);
      expect([await levels(a), await levels(b)]).toEqual([{ available: 0, reserved: 2 }, { available: 0, reserved: 1 }]);
      expect(await client.release(old)).toBe(2);
      expect(await client.release(old)).toBe(0);
      expect([await levels(a), await levels(b)]).toEqual([{ available: 1, reserved: 1 }, { available: 1, reserved: 0 }]);
      expect(await client.release(replacement)).toBe(1);
      expect([await levels(a), await levels(b)]).toEqual([{ available: 2, reserved: 0 }, { available: 1, reserved: 0 }]);
    });

    it('undoes a replacement when the replacing order is released: the old order holds its units again', async () => {
      const { client, stocked, levels } = subject();
      const a = await stocked(3);
      const [old, replacement] = [key('old'), key('new')];
      await client.reserveOrder(old, [{ sku: a, quantity: 2 }]);
      await client.reserveOrder(replacement, [{ sku: a, quantity: 3 }], old);
      expect(await levels(a)).toEqual({ available: 0, reserved: 3 });
      await client.release(replacement);
      expect(await levels(a)).toEqual({ available: 1, reserved: 2 });
      await client.release(replacement);
      expect(await levels(a)).toEqual({ available: 1, reserved: 2 });
      expect(await client.release(old)).toBe(1);
      expect(await levels(a)).toEqual({ available: 3, reserved: 0 });
    });

    it('refuses a replacement needing more than the old units plus what is free, changing nothing', async () => {
      const { client, stocked, levels } = subject();
      const a = await stocked(3);
      const old = key('old');
      await client.reserveOrder(old, [{ sku: a, quantity: 2 }]);
      const refused = await refusal(client.reserveOrder(key('new'), [{ sku: a, quantity: 4 }], old));
      expect([refused instanceof OutOfStock, (refused as OutOfStock).skus]).toEqual([true, [a]]);
      expect(await levels(a)).toEqual({ available: 1, reserved: 2 });
      expect(await client.release(old)).toBe(1);
      expect(await levels(a)).toEqual({ available: 3, reserved: 0 });
    });

    it('refuses a second replacement of one order, short of the units the first took over, as a conflict', async () => {
      const { client, stocked, levels } = subject();
      const a = await stocked(2);
      const [old, first] = [key('old'), key('first')];
      await client.reserveOrder(old, [{ sku: a, quantity: 2 }]);
      await client.reserveOrder(first, [{ sku: a, quantity: 1 }], old);
      const second = await refusal(client.reserveOrder(key('second'), [{ sku: a, quantity: 1 }], old));
      expect([second instanceof Conflict, (second as Conflict).code]).toEqual([true, 'CONFLICT']);
      expect(await levels(a)).toEqual({ available: 0, reserved: 2 });
      await client.release(old);
      expect(await levels(a)).toEqual({ available: 1, reserved: 1 });
      // An order that holds nothing any more: a replacement that fits in free stock still reserves.
      await client.reserveOrder(key('third'), [{ sku: a, quantity: 1 }], old);
      expect(await levels(a)).toEqual({ available: 0, reserved: 2 });
    });

    it('ships a replacement: Fulfil takes its units, and releasing the old order gives back the rest', async () => {
      const { client, stocked, levels } = subject();
      const a = await stocked(2);
      const [old, replacement] = [key('old'), key('new')];
      await client.reserveOrder(old, [{ sku: a, quantity: 2 }]);
      await client.reserveOrder(replacement, [{ sku: a, quantity: 1 }], old);
      expect(await client.fulfil(replacement)).toBe(1);
      expect(await levels(a)).toEqual({ available: 0, reserved: 1 });
      await client.release(replacement);
      expect(await levels(a)).toEqual({ available: 0, reserved: 1 });
      expect(await client.release(old)).toBe(1);
      expect(await levels(a)).toEqual({ available: 1, reserved: 0 });
    });

    it('ships an order whose replacement lost: Fulfil ends the replacement too, and its late release changes nothing', async () => {
      const { client, stocked, levels } = subject();
      const [a, b] = [await stocked(3), await stocked(1)];
      const [old, replacement] = [key('old'), key('new')];
      await client.reserveOrder(old, [{ sku: a, quantity: 1 }]);
      await client.reserveOrder(replacement, [{ sku: a, quantity: 2 }, { sku: b, quantity: 1 }], old);
      expect([await levels(a), await levels(b)]).toEqual([{ available: 1, reserved: 2 }, { available: 0, reserved: 1 }]);
      expect(await client.fulfil(old)).toBe(1);
      expect([await levels(a), await levels(b)]).toEqual([{ available: 2, reserved: 0 }, { available: 1, reserved: 0 }]);
      await client.release(replacement);
      expect([await levels(a), await levels(b)]).toEqual([{ available: 2, reserved: 0 }, { available: 1, reserved: 0 }]);
      expect(await client.fulfil(old)).toBe(0);
    });
  });
}
