// The inventory subgraph: Product.availableQuantity, from the stock of the product's SKU (which
// the gateway fetches from the catalog first: @requires). One stock query per request.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import DataLoader from 'dataloader';
import { gql, requirePrincipal, type SubgraphContext } from '@platform/graphql-kit';
import { parseMessage } from '@platform/validation';
import { getStockRequest } from '../stock/schemas';
import type { StockService } from '../stock/service';

export const inventoryTypeDefs = gql(readFileSync(path.join(__dirname, 'schema.graphql'), 'utf8'));

interface InventoryContext extends SubgraphContext {
  availableLoader?: DataLoader<string, number>;
}

/** Available units per SKU for every product of the request, in one GetStock. */
function availableLoaderOf(context: InventoryContext, stock: StockService) {
  context.availableLoader ??= new DataLoader(async (skus: readonly string[]) => {
    // The batch is checked as a GetStock is (at most 100 SKUs, each one a SKU column holds).
    const levels = new Map((await stock.getStock(parseMessage(getStockRequest, { skus }).skus)).map((level) => [level.sku, level.available]));
    return skus.map((sku) => levels.get(sku) ?? 0);
  });
  return context.availableLoader;
}

export function inventoryResolvers(stock: StockService) {
  return {
    Product: {
      __resolveReference: (reference: { id: string; sku?: string }, context: InventoryContext) => {
        requirePrincipal(context);
        return reference;
      },
      availableQuantity: async (product: { sku?: string }, _: unknown, context: InventoryContext) => {
        requirePrincipal(context);
        if (!product.sku) return 0;
        return availableLoaderOf(context, stock).load(product.sku);
      },
    },
  };
}
