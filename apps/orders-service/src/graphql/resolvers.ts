// The orders subgraph: the same use cases as REST, so the same ownership, validation,
// idempotency and stock rules, and the same answers: an order resolves to REST's representation
// (`toOrderResponse`), plus what only the graph has (the version, the shipment, and the user and
// product references resolved from the representation's ids), so a field added to the
// representation and to schema.graphql under one name needs no code here. Errors are thrown as
// they are: graphql-kit's formatGraphQLError gives a domain error (or an ApiError) the code REST gives it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import DataLoader from 'dataloader';
import { DateTime, gql, inArgument, requirePrincipal, type SubgraphContext } from '@platform/graphql-kit';
import { parseArgument, z } from '@platform/validation';
import type { OrderUseCases } from '../app';
import { checkedIdempotencyKey } from '../idempotency/store';
import type { OrderRow } from '../orders/repository';
import { type OrderItemResponse, type OrderResponse, toOrderResponse, toShipmentResponse } from '../orders/representation';
import { createOrderBody, patchOrderBody } from '../orders/schemas';

/** `orders(first:)`: how many of the caller's most recent orders, 1 to 100. */
const firstArgument = z.number().int().min(1).max(100);
/** `updateOrder(expectedVersion:)`, `cancelOrder(expectedVersion:)`: a version the order can have (If-Match's number in REST). */
const versionArgument = z.number().int().min(1);

/** The version a mutation's `expectedVersion` names; undefined without it (the write is unconditional). */
function expectedVersionOf(args: { expectedVersion?: number | null }): number | undefined {
  return args.expectedVersion == null ? undefined : parseArgument(versionArgument, args.expectedVersion, 'expectedVersion');
}

/** An order as the subgraph answers it: the representation, and the graph's own parts of the row. */
export function toOrderNode(order: OrderRow) {
  return { ...toOrderResponse(order), version: order.version, shipment: toShipmentResponse(order.id, order.shipment) };
}

export const ordersTypeDefs = gql(readFileSync(path.join(__dirname, 'schema.graphql'), 'utf8'));

interface OrdersContext extends SubgraphContext {
  orderLoader?: DataLoader<string, OrderRow | null>;
}

export function ordersResolvers(orders: Pick<OrderUseCases, 'queries' | 'placeOrder' | 'cancelOrder' | 'changeOrder'>) {
  return {
    DateTime,
    Query: {
      order: async (_: unknown, args: { id: string }, context: OrdersContext) => toOrderNode(await orders.queries.get(requirePrincipal(context), args.id)),
      orders: async (_: unknown, args: { first?: number; after?: string | null }, context: OrdersContext) => {
        const principal = requirePrincipal(context);
        const first = parseArgument(firstArgument, args.first ?? 20, 'first');
        return (await orders.queries.recent(principal, first, args.after ?? undefined)).map(toOrderNode);
      },
    },
    Mutation: {
      createOrder: async (_: unknown, args: { input: unknown; idempotencyKey?: string | null }, context: OrdersContext) => {
        const principal = requirePrincipal(context);
        const input = parseArgument(createOrderBody, args.input, 'input');
        const placed = await orders.placeOrder(principal, input, checkedIdempotencyKey(args.idempotencyKey, 'idempotencyKey')).catch(inArgument('input'));
        // A new order is answered as written. A replay's stored body is the order as it was placed,
        // while the graph answers with the order as it is now: only a replay reads it again.
        return toOrderNode(placed.kind === 'ran' ? placed.result : await orders.queries.get(principal, (placed.answer.body as OrderResponse).id));
      },
      cancelOrder: async (_: unknown, args: { id: string; expectedVersion?: number | null }, context: OrdersContext) => {
        const principal = requirePrincipal(context);
        return toOrderNode(await orders.cancelOrder.cancel(principal, args.id, { expectedVersion: expectedVersionOf(args) }));
      },
      // REST PATCH's use case with its body schema: the same rules, codes and version check.
      updateOrder: async (_: unknown, args: { id: string; input: unknown; expectedVersion?: number | null }, context: OrdersContext) => {
        const principal = requirePrincipal(context);
        const input = parseArgument(patchOrderBody, args.input, 'input');
        const expectedVersion = expectedVersionOf(args);
        return toOrderNode(await orders.changeOrder.patch(principal, args.id, input, expectedVersion).catch(inArgument('input')));
      },
    },
    Order: {
      // null, not an error, once the customer deleted their account (the schema says so).
      user: (order: OrderResponse) => (order.userId ? { __typename: 'User', id: order.userId } : null),
      __resolveReference: async (reference: { id: string }, context: OrdersContext) => {
        const principal = requirePrincipal(context);
        context.orderLoader ??= new DataLoader(async (ids: readonly string[]) => {
          const found = await orders.queries.getMany(principal, ids);
          return ids.map((id) => found.get(id) ?? null);
        });
        const order = await context.orderLoader.load(reference.id);
        return order ? toOrderNode(order) : null;
      },
    },
    OrderItem: {
      // A Product reference per line: the gateway fetches all of a response's products from the catalog at once.
      product: (item: OrderItemResponse) => ({ __typename: 'Product', id: item.productId }),
    },
  };
}
