// What an order costs, from the catalog's prices: the client's idea of a price never counts.
import { Invalid } from '@platform/errors';
import { isId, newId } from '@platform/ids';
import type { Catalog } from '../catalog/client';
import type { NewOrderItem } from './repository';
import type { CreateOrderInput } from './schemas';

/** The largest total an order may have (the amount column is a 32-bit integer). */
const MAX_AMOUNT = 2_147_483_647;

export interface PricedOrder {
  amount: number;
  currency: string;
  items: NewOrderItem[];
}

export class Pricing {
  constructor(private readonly catalog: Catalog) {}

  /** Prices every item; unknown products, mixed currencies and a total out of range are 422s. */
  async price(items: CreateOrderInput['items']): Promise<PricedOrder> {
    const products = await this.catalog.productsByIds(items.map((item) => item.productId).filter(isId));
    const unknown = items.flatMap((item, index) => (products.has(item.productId) ? [] : [{ field: `items[${index}].productId`, code: 'NOT_ALLOWED' as const, message: `No product ${item.productId}.` }]));
    if (unknown.length) throw new Invalid('Some items name products that do not exist.', unknown);
    const currencies = new Set(items.map((item) => products.get(item.productId)!.currency));
    if (currencies.size > 1) throw new Invalid('Items are priced in different currencies.', [{ field: 'items', code: 'NOT_ALLOWED', message: 'All items of an order must be priced in one currency.' }]);
    const priced = items.map((item) => {
      const product = products.get(item.productId)!;
      return { id: newId(), productId: product.id, sku: product.sku, productName: product.name, quantity: item.quantity, unitPrice: product.price, amount: product.price * item.quantity };
    });
    const amount = priced.reduce((sum, item) => sum + item.amount, 0);
    if (amount > MAX_AMOUNT) throw new Invalid('The order total is too large.', [{ field: 'items', code: 'OUT_OF_RANGE', message: `The order total must not exceed ${MAX_AMOUNT}.` }]);
    return { amount, currency: [...currencies][0], items: priced };
  }
}
