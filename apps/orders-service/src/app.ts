// The orders-service request pipeline, in the order a request meets it.
import { databaseOutages } from '@platform/db';
import express from 'express';
import { authenticate, TokenVerifier } from '@platform/auth';
import { errorHandler, notFoundHandler, requireAcceptableResponse } from '@platform/errors';
import { createSubgraphMiddleware } from '@platform/graphql-kit';
import type { InventoryGateway } from '@platform/inventory-contract';
import { type Health, jsonBody, type Logger, type Metrics, requestContext, requestLog } from '@platform/service-kit';
import { CancellationRepository } from './cancellations/repository';
import { CancellationService } from './cancellations/service';
import type { Catalog } from './catalog/client';
import type { OrdersConfig } from './config';
import type { PrismaClient } from './generated/prisma/client';
import { ordersResolvers, ordersTypeDefs } from './graphql/resolvers';
import { IdempotencyStore } from './idempotency/store';
import { OrderRepository } from './orders/repository';
import { ordersRoutes } from './orders/routes';
import { OrderService } from './orders/service';
import { pendingStockReleasesGauge } from './orders/stock-release-metrics';

export interface OrdersAppDeps {
  config: Pick<OrdersConfig, 'jwtVerifySecrets' | 'cursorSecret' | 'REQUEST_TIMEOUT_MS' | 'NODE_ENV'>;
  prisma: PrismaClient;
  catalog: Catalog;
  inventory: InventoryGateway;
  logger: Logger;
  health: Health;
  metrics: Metrics;
}

export async function createOrdersApp(deps: OrdersAppDeps) {
  const { config } = deps;
  const verifier = new TokenVerifier(config.jwtVerifySecrets);
  const orderRows = new OrderRepository(deps.prisma);
  pendingStockReleasesGauge(orderRows, deps.metrics.registry);
  const orders = new OrderService(orderRows, deps.catalog, deps.inventory, new IdempotencyStore(deps.prisma), config.cursorSecret, deps.logger);
  const cancellations = new CancellationService(new CancellationRepository(deps.prisma), orders, deps.logger);
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
  app.use(authenticate(verifier)); // everything below needs a bearer token
  app.use(ordersRoutes(orders, cancellations)); // /orders..., /order-items/:id
  app.use(notFoundHandler);
  app.use(databaseOutages); // an unreachable database: 503 + Retry-After, not 500
  app.use(errorHandler);
  return { app, orders, cancellations };
}
