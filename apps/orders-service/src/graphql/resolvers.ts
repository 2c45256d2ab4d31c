// The orders subgraph: the same OrderService as REST, so the same ownership rules.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import DataLoader from 'dataloader';
import { ApiError } from '@platform/errors';
import { DateTime, gql, requirePrincipal, toGraphQLError, type SubgraphContext } from '@platform/graphql-kit';
import type { OrderRow } from '../orders/repository';
import type { OrderService } from '../orders/service';

export const ordersTypeDefs = gql(readFileSync(path.join(__dirname, 'schema.graphql'), 'utf8'));

interface OrdersContext extends SubgraphContext {
  orderLoader?: DataLoader<string, OrderRow | null>;
}

function toGraphOrder(order: OrderRow) {
  const productId = order.items[0]?.productId ?? null;
  return {
    id: order.id,
    amount: order.amount,
    currency: order.currency,
    status: order.status,
    createdAt: order.createdAt.toISOString(),
    productId,
    user: { __typename: 'User', id: order.userId },
    product: productId ? { __typename: 'Product', id: productId } : null,
    shipment: { status: order.shipment?.status ?? 'PREPARING', carrier: order.shipment?.carrier ?? null, trackingNumber: order.shipment?.trackingNumber ?? null },
  };
}

export function ordersResolvers(orders: OrderService) {
  return {
    DateTime,
    Query: {
      order: async (_: unknown, args: { id: string }, context: OrdersContext) => {
        try {
          return toGraphOrder(await orders.get(requirePrincipal(context), args.id));
        } catch (error) {
          throw toGraphQLError(error);
        }
      },
      orders: async (_: unknown, args: { first?: number; after?: string | null }, context: OrdersContext) => {
        try {
          const first = args.first ?? 20;
          if (!Number.isInteger(first) || first < 1 || first > 100) {
            throw new ApiError('VALIDATION_FAILED', 'first must be from 1 to 100.', { status: 422, fieldErrors: [{ field: 'first', code: 'OUT_OF_RANGE', message: 'first must be from 1 to 100.' }] });
          }
          return (await orders.recent(requirePrincipal(context), first, args.after ?? undefined)).map(toGraphOrder);
        } catch (error) {
          throw toGraphQLError(error);
        }
      },
    },
    Order: {
      __resolveReference: async (reference: { id: string }, context: OrdersContext) => {
        const principal = context.principal;
        if (!principal) return null;
        context.orderLoader ??= new DataLoader(async (ids: readonly string[]) => {
          const found = await orders.getMany(principal, ids);
          return ids.map((id) => found.get(id) ?? null);
        });
        const order = await context.orderLoader.load(reference.id);
        return order ? toGraphOrder(order) : null;
      },
    },
  };
}
