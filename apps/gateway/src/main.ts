// gateway process: see runService for the life cycle; metrics listen on their own port.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import express from 'express';
import { serviceTokenSource } from '@platform/auth';
import { createOutgoingCalls } from '@platform/outgoing-calls';
import { configOrExit, listen, runService, stoppableHttpServer } from '@platform/service-kit';
import { openUsageStore, UsageRecorder } from '@platform/usage';
import { createGatewayApp } from './app';
import { ApiKeyCheck } from './auth/api-keys';
import { CredentialCheck } from './auth/credentials';
import { subscribeToRevocations } from './auth/revocation-feed';
import { loadGatewayConfig } from './config';
import { policiesOf } from './rate-limit/policies';
import { connectRedis, RateLimits, redisReady } from './rate-limit/rate-limits';

const config = configOrExit('gateway', loadGatewayConfig);

runService({
  name: 'gateway',
  config,
  async build({ logger, health, metrics }) {
    const redis = config.REDIS_URL ? connectRedis(config.REDIS_URL, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }, logger) : undefined;
    // Every call to a service (proxy, subgraphs, credential and API-key lookups, reports) is built by this one factory.
    const calls = createOutgoingCalls({ registry: metrics.registry, serviceToken: serviceTokenSource(config.jwtSecret, 'gateway'), defaultTimeoutMs: config.REQUEST_TIMEOUT_MS });
    const credentials = new CredentialCheck({ usersUrl: config.USERS_URL, calls, cacheMs: config.CREDENTIALS_CACHE_MS, timeoutMs: config.CREDENTIALS_TIMEOUT_MS, logger });
    const apiKeys = new ApiKeyCheck({ usersUrl: config.USERS_URL, calls, jwtSecret: config.jwtSecret, cacheMs: config.API_KEYS_CACHE_MS, timeoutMs: config.CREDENTIALS_TIMEOUT_MS, logger });
    // Revocations pushed by users-service reach this replica within a second (auth/revocation-feed.ts).
    const revocations = config.REDIS_URL ? subscribeToRevocations(config.REDIS_URL, credentials, logger, apiKeys) : undefined;
    // Both connections are awaited together: a Redis that is down costs the start 3 s, not twice that.
    const [countsShared, feedSubscribed] = await Promise.all([redis ? redisReady(redis, 3_000) : undefined, revocations?.ready(3_000)]);
    if (countsShared === false) logger.warn("Redis did not answer at start: rate limits are counted in this replica's memory until it does");
    if (feedSubscribed === false) logger.warn('revocation feed: not subscribed yet; revocations reach this gateway within CREDENTIALS_CACHE_MS until it is');
    if (!redis) logger.warn('REDIS_URL is not set: rate limits live in this process only; with several replicas each keeps its own count');
    logger.info({ file: config.DEPRECATIONS_FILE.file, entries: config.DEPRECATIONS_FILE.entries.length }, 'deprecation registry read');
    const rateLimits = new RateLimits(policiesOf(config), { redis, logger, registry: metrics.registry, probeIntervalMs: config.REDIS_PROBE_INTERVAL_MS });
    // Each caller's use of the contracts, shared by every replica: Redis when configured, else files under DATA_DIR.
    const usage = config.USAGE_RECORDING === 'on'
      ? new UsageRecorder(openUsageStore({ redisUrl: config.REDIS_URL, dataDir: config.DATA_DIR, keyPrefix: config.USAGE_KEY_PREFIX }), { registry: metrics.registry, maxCallersPerDay: config.USAGE_MAX_CALLERS_PER_DAY, onError: (error) => logger.warn({ err: error }, 'usage flush failed; the counts are kept for the next one') }).start()
      : undefined;
    const { app, stopGraph } = await createGatewayApp({ config, rateLimits, credentials, apiKeys, logger, health, metrics, calls, usage, supergraphPath: path.join(__dirname, 'supergraph.graphql'), openapiPath: path.join(__dirname, 'openapi.json'), trustedDocumentsPath: path.join(__dirname, 'trusted-documents.json'), pagesDir: path.join(__dirname, 'pages') });
    const metricsApp = express().get('/metrics', metrics.handler);
    const metricsServer = await listen(metricsApp, config.METRICS_PORT, config.LISTEN_HOST);
    logger.info({ port: metricsServer.port }, 'metrics listening');
    return {
      app,
      listeners: [stoppableHttpServer(metricsServer.server)],
      resources: [stopGraph, async () => usage?.stop().then(() => usage.store.close()), async () => rateLimits.stop(), async () => revocations?.stop(), async () => void (await redis?.quit().catch(() => undefined))],
    };
  },
});
