// inventory-service: the gRPC server and its HTTP side (health, readiness, metrics, and the stock
// levels people read and set through the gateway).
import { databaseOutages } from '@platform/db';
import type { TokenVerifier } from '@platform/auth';
import { type DatabaseKind, eventRoutes } from '@platform/events';
import { createSubgraphMiddleware } from '@platform/graphql-kit';
import { createService, type Health, type Logger, type Metrics } from '@platform/service-kit';
import type { DatabaseClient } from './database';
import { inventoryResolvers, inventoryTypeDefs } from './graphql/resolvers';
import type { UsageRecorder } from '@platform/usage';
import { createInventoryGrpc, type InventoryCallers, INVENTORY_SERVICE_NAME, type StreamLimits } from './grpc/server';
import { StockRepository } from './stock/repository';
import { stockLevelRoutes } from './stock/routes';
import type { Deprecation } from '@platform/deprecations';
import { StockService } from './stock/service';
import { type Notifications, StockWatch } from './stock/watch';

export interface InventoryAppDeps {
  prisma: DatabaseClient;
  /** The database behind `prisma`: an embedded one (PGlite) serves this process alone. Unset: treated as shared. */
  databaseKind?: DatabaseKind;
  logger: Logger;
  health: Health;
  metrics: Metrics;
  /** Who may call Inventory, and how their service tokens are checked. */
  callers: InventoryCallers;
  /** The database's LISTEN (WatchStock's feed of committed stock changes). */
  notifications: Notifications;
  /** People's tokens (REST /stock-levels), as every service verifies them. */
  verifier: TokenVerifier;
  cursorSecret: string;
  /** A request's time budget when the caller sends none (REQUEST_TIMEOUT_MS, as in every app). */
  requestTimeoutMs: number;
  /** The subgraph's introspection (off in production). */
  introspection: boolean;
  /** What gRPC callers may make this replica hold (the GRPC_* settings); unset: the defaults. */
  streamLimits?: StreamLimits;
  /** The deprecation registry's entries (DEPRECATIONS_FILE): deprecated RPCs. */
  deprecations?: readonly Deprecation[];
  /** Where each calling service's use of the RPCs and their fields is counted (libs/usage). */
  usage?: UsageRecorder;
}

export function createInventoryApp(deps: InventoryAppDeps) {
  const repository = new StockRepository(deps.prisma);
  const watch = new StockWatch(deps.notifications, repository, deps.logger);
  const stock = new StockService(repository, watch);
  const grpc = createInventoryGrpc({ stock, callers: deps.callers, logger: deps.logger, registry: deps.metrics.registry, limits: deps.streamLimits, deprecations: deps.deprecations, usage: deps.usage, onStop: () => watch.close(), ready: async () => (await deps.health.readiness()).ready });
  // gRPC health follows the process: NOT_SERVING as soon as the stop begins.
  deps.health.onStopping(() => {
    grpc.health.setStatus('', 'NOT_SERVING');
    grpc.health.setStatus(INVENTORY_SERVICE_NAME, 'NOT_SERVING');
  });

  // The pipeline, in the order a request meets it (service-kit createService): trace context and
  // deadline, log line, metrics, /healthz and /readyz, /metrics, 406, JSON body (415, 413,
  // malformed); then the parts below in this order; then 404, outages, the error renderer.
  const app = createService({
    logger: deps.logger,
    health: deps.health,
    metrics: deps.metrics,
    requestTimeoutMs: deps.requestTimeoutMs,
    graphql: createSubgraphMiddleware({ typeDefs: inventoryTypeDefs, resolvers: inventoryResolvers(stock), verifier: deps.verifier, introspection: deps.introspection }), // /graphql: the subgraph; verifies the forwarded token itself
    internal: [eventRoutes({ db: deps.prisma, databaseKind: deps.databaseKind, service: 'inventory-service', internalVerifier: deps.callers.verifier })], // /internal/events: its published events (service tokens only; it consumes none)
    verifier: deps.verifier, // everything below needs a bearer token
    resources: [stockLevelRoutes(stock, deps.cursorSecret)], // /stock-levels, /stock-levels/:sku
    outages: [databaseOutages], // an unreachable database: 503 + Retry-After, not 500
  });
  return { app, stock, grpc, watch };
}
