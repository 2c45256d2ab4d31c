// The catalog-service request pipeline, in the order a request meets it.
import { databaseOutages } from '@platform/db';
import express from 'express';
import { authenticate, TokenVerifier } from '@platform/auth';
import { errorHandler, notFoundHandler, requireAcceptableResponse } from '@platform/errors';
import { deadLetterRoutes, deadLettersOf, type EventHandlers, eventLogRoutes } from '@platform/events';
import { createSubgraphMiddleware } from '@platform/graphql-kit';
import { type Health, jsonBody, type Logger, type Metrics, requestContext, requestLog } from '@platform/service-kit';
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
  app.use(eventLogRoutes(deps.prisma, 'catalog-service', internalVerifier)); // GET /internal/events: this service's published events (service tokens only)
  app.use(deadLetterRoutes(deadLettersOf(deps.prisma, eventHandlers, deps.logger), internalVerifier)); // /internal/dead-letters: events its consumer parked, to list and replay (service tokens only)
  app.use(authenticate(verifier)); // everything below needs a bearer token
  app.use(productsRoutes(products)); // /products, /products/:id, /products/:id/rating
  app.use(reviewsRoutes(reviews)); // /products/:id/reviews
  app.use(notFoundHandler);
  app.use(databaseOutages); // an unreachable database: 503 + Retry-After, not 500
  app.use(errorHandler);
  return { app, products, eventHandlers };
}
