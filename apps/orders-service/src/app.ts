// The orders-service request pipeline, in the order a request meets it.
import { databaseOutages } from '@platform/db';
import { TokenVerifier } from '@platform/auth';
import { type DatabaseKind, type EventHandlers, eventRoutes } from '@platform/events';
import { createSubgraphMiddleware } from '@platform/graphql-kit';
import type { InventoryGateway } from '@platform/inventory-contract';
import { createService, type Health, type Logger, type Metrics } from '@platform/service-kit';
import { CancelOrder } from './cancellations/cancel-order';
import { CancellationRepository } from './cancellations/repository';
import { cancellationRoutes } from './cancellations/routes';
import { CancellationService } from './cancellations/service';
import type { Catalog } from './catalog/client';
import type { OrdersConfig } from './config';
import type { DatabaseClient } from './database';
import { ordersResolvers, ordersTypeDefs } from './graphql/resolvers';
import { idempotent } from './idempotency/idempotent';
import { IdempotencyStore } from './idempotency/store';
import { ChangeOrder } from './orders/change-order';
import { PlaceOrder } from './orders/place-order';
import { Pricing } from './orders/pricing';
import { OrderQueries } from './orders/queries';
import type { CreateOrderInput } from './orders/schemas';
import { OrderRepository } from './orders/repository';
import { toPlacedOrderAnswer } from './orders/representation';
import { ordersRoutes } from './orders/routes';
import { ShipmentService } from './shipments/service';
import { shipmentRoutes } from './shipments/routes';
import { pendingStockReleasesGauge } from './stock/pending-releases-gauge';
import { ReservationLedger } from './stock/repository';
import { StockReservations } from './stock/reservations';
import { Sweeper } from './sweeper';
import { DeletedUsers } from './users/deleted-users';

export interface OrdersAppDeps {
  config: Pick<OrdersConfig, 'jwtVerifySecrets' | 'cursorSecret' | 'REQUEST_TIMEOUT_MS' | 'NODE_ENV'>;
  prisma: DatabaseClient;
  /** The database behind `prisma`: an embedded one (PGlite) serves this process alone. Unset: treated as shared. */
  databaseKind?: DatabaseKind;
  catalog: Catalog;
  inventory: InventoryGateway;
  logger: Logger;
  health: Health;
  metrics: Metrics;
}

export interface OrderUseCaseDeps {
  orders: OrderRepository;
  reservations: ReservationLedger;
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
  const stock = new StockReservations(deps.reservations, deps.inventory, deps.logger);
  const cancelOrder = new CancelOrder(deps.orders, queries, stock, deps.logger);
  const placing = new PlaceOrder(deps.orders, pricing, stock);
  const shipments = new ShipmentService(deps.orders, queries, stock);
  return {
    queries,
    // Once per Idempotency-Key: the key's answer (POST /orders's 201 and body) commits with the order.
    placeOrder: idempotent(deps.idempotency, (principal, input: CreateOrderInput, alongside) => placing.place(principal, input, alongside), toPlacedOrderAnswer),
    changeOrder: new ChangeOrder(deps.orders, queries, pricing, stock, cancelOrder, shipments),
    cancelOrder,
    shipments,
    stock,
  };
}

export type OrderUseCases = ReturnType<typeof createOrderUseCases>;

export async function createOrdersApp(deps: OrdersAppDeps) {
  const { config } = deps;
  const verifier = new TokenVerifier(config.jwtVerifySecrets);
  const orderRows = new OrderRepository(deps.prisma);
  const reservations = new ReservationLedger(deps.prisma);
  pendingStockReleasesGauge(reservations, deps.metrics.registry);
  const idempotency = new IdempotencyStore(deps.prisma);
  const orders = createOrderUseCases({ orders: orderRows, reservations, catalog: deps.catalog, inventory: deps.inventory, idempotency, cursorSecret: config.cursorSecret, logger: deps.logger });
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

  const internalVerifier = new TokenVerifier(config.jwtVerifySecrets, { audience: 'internal' });
  // The pipeline, in the order a request meets it (service-kit createService): trace context and
  // deadline, log line, metrics, /healthz and /readyz, /metrics, 406, JSON body (415, 413,
  // malformed); then the parts below in this order; then 404, outages, the error renderer.
  const app = createService({
    logger: deps.logger,
    health: deps.health,
    metrics: deps.metrics,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    graphql, // /graphql: the subgraph; verifies the forwarded token itself
    internal: [eventRoutes({ db: deps.prisma, databaseKind: deps.databaseKind, service: 'orders-service', internalVerifier, consumer: { handlers: eventHandlers, logger: deps.logger } })], // /internal/events: its published events; /internal/dead-letters: what its consumer parked (service tokens only)
    verifier, // everything below needs a bearer token
    resources: [
      ordersRoutes(orders.queries, orders.placeOrder, orders.changeOrder), // /orders..., /order-items/:id
      shipmentRoutes(orders.queries, orders.shipments), // /orders/:id/shipment
      cancellationRoutes(cancellations), // /orders/:id/cancellation
    ],
    outages: [databaseOutages], // an unreachable database: 503 + Retry-After, not 500
  });
  return { app, orders, cancellations, sweeper, eventHandlers };
}
