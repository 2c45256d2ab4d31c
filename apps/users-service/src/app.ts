// The users-service request pipeline, in the order a request meets it.
import { databaseOutages } from '@platform/db';
import { authenticate, TokenVerifier } from '@platform/auth';
import { type DatabaseKind, eventRoutes } from '@platform/events';
import { createSubgraphMiddleware } from '@platform/graphql-kit';
import { createService, type Health, type Logger, type Metrics } from '@platform/service-kit';
import type { DatabaseClient } from './database';
import { ApiKeyRepository } from './api-keys/repository';
import { apiKeysRoutes, apiKeyVerificationRoutes } from './api-keys/routes';
import { ApiKeyService } from './api-keys/service';
import { apiKeyHashSecretOf, type UsersConfig } from './config';
import type { RevocationPublisher } from './credentials/revocations';
import { credentialsRoutes } from './credentials/routes';
import { usersResolvers, usersTypeDefs } from './graphql/resolvers';
import { UserRepository } from './users/repository';
import { usersRoutes } from './users/routes';
import { UserService } from './users/service';
import { AddressGuard, type HostResolver } from './webhooks/address-guard';
import { WebhookDispatcher } from './webhooks/dispatcher';
import { webhookEventHandlers } from './webhooks/intake';
import { WebhookRepository } from './webhooks/repository';
import { webhookRoutes } from './webhooks/routes';
import { WebhookService } from './webhooks/service';

export interface UsersAppDeps {
  config: Pick<UsersConfig, 'API_KEY_HASH_SECRET' | 'jwtSecret' | 'jwtVerifySecrets' | 'cursorSecret' | 'ACCESS_TOKEN_TTL_S' | 'REQUEST_TIMEOUT_MS' | 'NODE_ENV'> & Partial<Pick<UsersConfig, 'WEBHOOK_ALLOW_LOOPBACK' | 'WEBHOOK_ALLOWED_PORTS' | 'WEBHOOK_ACCOUNT_CONCURRENCY' | 'WEBHOOK_CONNECT_TIMEOUT_MS' | 'DEPRECATIONS_FILE'>>;
  prisma: DatabaseClient;
  /** The database behind `prisma`: an embedded one (PGlite) serves this process alone. Unset: treated as shared. */
  databaseKind?: DatabaseKind;
  logger: Logger;
  health: Health;
  metrics: Metrics;
  /** Pushes password changes, deletions and revoked API keys to the gateways (REDIS_URL); unset: none pushed. */
  revocations?: RevocationPublisher;
  /** Tests: a fake clock for retry schedules, a fake DNS, a short delivery timeout. */
  webhooks?: { clock?: () => Date; resolve?: HostResolver; timeoutMs?: number };
}

export async function createUsersApp(deps: UsersAppDeps) {
  const { config } = deps;
  const verifier = new TokenVerifier(config.jwtVerifySecrets);
  const internalVerifier = new TokenVerifier(config.jwtVerifySecrets, { audience: 'internal' });
  const users = new UserService(new UserRepository(deps.prisma), {
    jwtSecret: config.jwtSecret,
    cursorSecret: config.cursorSecret,
    accessTokenTtlS: config.ACCESS_TOKEN_TTL_S,
    revocations: deps.revocations,
  });
  const webhookRepository = new WebhookRepository(deps.prisma);
  const guard = new AddressGuard({ allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK ?? false, allowedPorts: config.WEBHOOK_ALLOWED_PORTS, resolve: deps.webhooks?.resolve });
  const dispatcher = new WebhookDispatcher(
    webhookRepository,
    guard,
    deps.logger,
    { clock: deps.webhooks?.clock, timeoutMs: deps.webhooks?.timeoutMs, accountConcurrency: config.WEBHOOK_ACCOUNT_CONCURRENCY, connectTimeoutMs: config.WEBHOOK_CONNECT_TIMEOUT_MS, deprecations: config.DEPRECATIONS_FILE?.entries },
    deps.metrics.registry,
  );
  const webhooks = new WebhookService(webhookRepository, guard, { cursorSecret: config.cursorSecret, clock: deps.webhooks?.clock, onDeliveriesDue: () => dispatcher.wake() });
  const eventHandlers = webhookEventHandlers(webhookRepository, { clock: deps.webhooks?.clock, onDeliveriesDue: () => dispatcher.wake() });
  const apiKeys = new ApiKeyService(new ApiKeyRepository(deps.prisma), { hashSecret: apiKeyHashSecretOf(config), cursorSecret: config.cursorSecret, revocations: deps.revocations });
  const graphql = createSubgraphMiddleware({ typeDefs: usersTypeDefs, resolvers: usersResolvers(users), verifier, introspection: config.NODE_ENV !== 'production' });

  // The pipeline, in the order a request meets it (service-kit createService): trace context and
  // deadline, log line, metrics, /healthz and /readyz, /metrics, 406, JSON body (415, 413,
  // malformed); then the parts below in this order; then 404, outages, the error renderer.
  const app = createService({
    logger: deps.logger,
    health: deps.health,
    metrics: deps.metrics,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    graphql, // /graphql: the subgraph; verifies the forwarded token itself
    internal: [
      { path: '/internal', handlers: [authenticate(internalVerifier), credentialsRoutes(users), apiKeyVerificationRoutes(apiKeys)] }, // the gateway's revocation and API key checks (service tokens only)
      eventRoutes({ db: deps.prisma, databaseKind: deps.databaseKind, service: 'users-service', internalVerifier, consumer: { handlers: eventHandlers, logger: deps.logger } }), // /internal/events: its published events; /internal/dead-letters: what its consumer (webhooks) parked (service tokens only)
    ],
    verifier, // everything below needs a bearer token
    resources: [
      usersRoutes(users), // /users, /users/:id; POST /users (sign-up) and POST /tokens need no token
      webhookRoutes(webhooks), // /webhook-endpoints, their deliveries, /events
      apiKeysRoutes(apiKeys), // /api-keys: the caller's issued keys
    ],
    outages: [databaseOutages], // an unreachable database: 503 + Retry-After, not 500
  });
  return { app, users, dispatcher, eventHandlers };
}
