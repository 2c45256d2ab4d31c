// The orders-service request pipeline, in the order a request meets it.
import { databaseOutages } from '@platform/db';
import express from 'express';
import { authenticate, TokenVerifier } from '@platform/auth';
import { errorHandler, notFoundHandler, requireAcceptableResponse } from '@platform/errors';
import { deadLetterRoutes, deadLettersOf, type EventHandlers, eventLogRoutes } from '@platform/events';
import { createSubgraphMiddleware } from '@platform/graphql-kit';
import type { InventoryGateway } from '@platform/inventory-contract';
import { type Health, jsonBody, type Logger, type Metrics, requestContext, requestLog } from '@platform/service-kit';
import { CancelOrder } from './cancellations/cancel-order';
import { CancellationRepository } from './cancellations/repository';
import { cancellationRoutes } from './cancellations/routes';
import { CancellationService } from './cancellations/service';
import type { Catalog } from './catalog/client';
import type { OrdersConfig } from './config';
import type { DatabaseClient } from './database';
import { ordersResolvers, ordersTypeDefs } from './graphql/resolvers';
import { IdempotencyStore } from './idempotency/store';
import { ChangeOrder } from './orders/change-order';
import { PlaceOrder } from './orders/place-order';
import { Pricing } from './orders/pricing';
import { OrderQueries } from './orders/queries';
import { OrderRepository } from './orders/repository';
import { ordersRoutes } from './orders/routes';
import { ShipmentService } from './shipments/service';
import { shipmentRoutes } from './shipments/routes';
import { pendingStockReleasesGauge } from './stock/pending-releases-gauge';
import { StockReservations } from './stock/reservations';
import { Sweeper } from './sweeper';
import { DeletedUsers } from './users/deleted-users';

export interface OrdersAppDeps {
  config: Pick<OrdersConfig, 'jwtVerifySecrets' | 'cursorSecret' | 'REQUEST_TIMEOUT_MS' | 'NODE_ENV'>;
  prisma: DatabaseClient;
  catalog: Catalog;
  inventory: InventoryGateway;
  logger: Logger;
  health: Health;
  metrics: Metrics;
}

export interface OrderUseCaseDeps {
  orders: OrderRepository;
  catalog: Catalog;
  inventory: InventoryGateway;
  idempotency: IdempotencyStore;
  cursorSecret: string;
  logger: Logger;
}

/** The use cases of orders, each a story of its own, wired to what they need. */
export function createOrderUseCases(deps: OrderUseCaseDeps) {
  const queries = new OrderQueries(deps.orders, deps.cursorSecret);
  const pricing = new Pricing(deps.catalog);
  const stock = new StockReservations(deps.orders, deps.inventory, deps.logger);
  const cancelOrder = new CancelOrder(deps.orders, queries, stock, deps.logger);
  return {
    queries,
    placeOrder: new PlaceOrder(deps.orders, pricing, stock, deps.idempotency),
    changeOrder: new ChangeOrder(deps.orders, queries, pricing, stock, cancelOrder),
    cancelOrder,
    shipments: new ShipmentService(deps.orders, queries),
    stock,
  };
}

export type OrderUseCases = ReturnType<typeof createOrderUseCases>;

export async function createOrdersApp(deps: OrdersAppDeps) {
  const { config } = deps;
  const verifier = new TokenVerifier(config.jwtVerifySecrets);
  const orderRows = new OrderRepository(deps.prisma);
  pendingStockReleasesGauge(orderRows, deps.metrics.registry);
  const idempotency = new IdempotencyStore(deps.prisma);
  const orders = createOrderUseCases({ orders: orderRows, catalog: deps.catalog, inventory: deps.inventory, idempotency, cursorSecret: config.cursorSecret, logger: deps.logger });
  // A new request wakes the worker at once rather than at its next interval.
  const cancellations = new CancellationService(new CancellationRepository(deps.prisma), orders.queries, orders.cancelOrder, deps.logger, () => setImmediate(() => void sweeper.sweep()));
  const sweeper = new Sweeper({ cancellations, stock: orders.stock, idempotency }, deps.logger);
  // What other services' events change here (libs/events EventConsumer calls these).
  const deletedUsers = new DeletedUsers(orderRows, orders.cancelOrder);
  const eventHandlers: EventHandlers = {
    'user.deleted': async (event) => {
      deps.logger.info({ userId: event.aggregateId, ...(await deletedUsers.forget(event.aggregateId)) }, "a deleted user's orders: open ones canceled, all unlinked");
    },
  };
  const graphql = createSubgraphMiddleware({ typeDefs: ordersTypeDefs, resolvers: ordersResolvers(orders), verifier, introspection: config.NODE_ENV !== 'production' });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(requestContext(config.REQUEST_TIMEOUT_MS)); // trace id, X-Request-Id, deadline
  app.use(requestLog(deps.logger)); // one JSON line per request
  app.use(deps.metrics.middleware);
  app.use(deps.health.router()); // /healthz, /readyz
  app.get('/metrics', deps.metrics.handler);
  app.use(requireAcceptableResponse); // 406
  app.use(jsonBody()); // 415, 413, malformed JSON
  app.use('/graphql', graphql); // subgraph; verifies the forwarded token itself
  const internalVerifier = new TokenVerifier(config.jwtVerifySecrets, { audience: 'internal' });
  app.use(eventLogRoutes(deps.prisma, 'orders-service', internalVerifier)); // GET /internal/events: this service's published events (service tokens only)
  app.use(deadLetterRoutes(deadLettersOf(deps.prisma, eventHandlers, deps.logger), internalVerifier)); // /internal/dead-letters: events its consumer parked, to list and replay (service tokens only)
  app.use(authenticate(verifier)); // everything below needs a bearer token
  app.use(ordersRoutes(orders.queries, orders.placeOrder, orders.changeOrder)); // /orders..., /order-items/:id
  app.use(shipmentRoutes(orders.queries, orders.shipments)); // /orders/:id/shipment
  app.use(cancellationRoutes(cancellations)); // /orders/:id/cancellation
  app.use(notFoundHandler);
  app.use(databaseOutages); // an unreachable database: 503 + Retry-After, not 500
  app.use(errorHandler);
  return { app, orders, cancellations, sweeper, eventHandlers };
}
