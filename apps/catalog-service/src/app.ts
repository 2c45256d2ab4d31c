// The catalog-service request pipeline, in the order a request meets it.
import { databaseOutages } from '@platform/db';
import { TokenVerifier } from '@platform/auth';
import { type DatabaseKind, type EventHandlers, eventRoutes } from '@platform/events';
import { createSubgraphMiddleware } from '@platform/graphql-kit';
import { createService, type Health, type Logger, type Metrics } from '@platform/service-kit';
import type { DatabaseClient } from './database';
import type { CatalogConfig } from './config';
import { catalogResolvers, catalogTypeDefs } from './graphql/resolvers';
import { ProductRepository } from './products/repository';
import { productsRoutes } from './products/routes';
import { ProductService } from './products/service';
import { ReviewRepository } from './reviews/repository';
import { reviewsRoutes } from './reviews/routes';
import { ReviewService } from './reviews/service';

export interface CatalogAppDeps {
  config: Pick<CatalogConfig, 'jwtVerifySecrets' | 'cursorSecret' | 'REQUEST_TIMEOUT_MS' | 'NODE_ENV'>;
  prisma: DatabaseClient;
  /** The database behind `prisma`: an embedded one (PGlite) serves this process alone. Unset: treated as shared. */
  databaseKind?: DatabaseKind;
  logger: Logger;
  health: Health;
  metrics: Metrics;
}

export async function createCatalogApp(deps: CatalogAppDeps) {
  const { config } = deps;
  const verifier = new TokenVerifier(config.jwtVerifySecrets);
  const products = new ProductService(new ProductRepository(deps.prisma), config.cursorSecret);
  const reviewRows = new ReviewRepository(deps.prisma);
  const reviews = new ReviewService(reviewRows, products, config.cursorSecret);
  // What other services' events change here (libs/events EventConsumer calls these).
  const eventHandlers: EventHandlers = {
    'user.deleted': async (event) => {
      deps.logger.info({ userId: event.aggregateId, reviews: await reviewRows.removeAuthor(event.aggregateId) }, "a deleted user's reviews kept without their author");
    },
  };
  const graphql = createSubgraphMiddleware({ typeDefs: catalogTypeDefs, resolvers: catalogResolvers(products, reviews), verifier, introspection: config.NODE_ENV !== 'production' });

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
    internal: [eventRoutes({ db: deps.prisma, databaseKind: deps.databaseKind, service: 'catalog-service', internalVerifier, consumer: { handlers: eventHandlers, logger: deps.logger } })], // /internal/events: its published events; /internal/dead-letters: what its consumer parked (service tokens only)
    verifier, // everything below needs a bearer token
    resources: [
      productsRoutes(products), // /products, /products/:id, /products/:id/rating
      reviewsRoutes(reviews), // /products/:id/reviews
    ],
    outages: [databaseOutages], // an unreachable database: 503 + Retry-After, not 500
  });
  return { app, products, eventHandlers };
}
