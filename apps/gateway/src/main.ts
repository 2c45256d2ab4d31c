// gateway process: see runService for the life cycle; metrics listen on their own port.
import path from 'node:path';
import express from 'express';
import { listen, runService, stoppableHttpServer } from '@platform/service-kit';
import { createGatewayApp } from './app';
import { loadGatewayConfig } from './config';
import { connectRedis, RateLimits, redisReady } from './rate-limit/rate-limits';

const config = loadGatewayConfig();

runService({
  name: 'gateway',
  config,
  async build({ logger, health, metrics }) {
    const redis = config.REDIS_URL ? connectRedis(config.REDIS_URL, logger) : undefined;
    if (redis && !(await redisReady(redis, 3_000))) logger.warn('Redis did not answer at start: serving on the in-memory insurance limiter until it does');
    if (!redis) logger.warn('REDIS_URL is not set: rate limits live in this process only; with several replicas each keeps its own count');
    const rateLimits = new RateLimits(
      {
        default: { points: config.RATE_LIMIT_POINTS, windowS: config.RATE_LIMIT_WINDOW_S },
        tokens: { points: config.RATE_LIMIT_TOKENS_POINTS, windowS: config.RATE_LIMIT_TOKENS_WINDOW_S },
        'tokens-ip': { points: config.RATE_LIMIT_TOKENS_IP_POINTS, windowS: config.RATE_LIMIT_TOKENS_WINDOW_S },
      },
      redis,
    );
    const { app, stopGraph } = await createGatewayApp({ config, rateLimits, logger, health, metrics, supergraphPath: path.join(__dirname, 'supergraph.graphql'), openapiPath: path.join(__dirname, 'openapi.json') });
    const metricsApp = express().get('/metrics', metrics.handler);
    const metricsServer = await listen(metricsApp, config.METRICS_PORT);
    logger.info({ port: metricsServer.port }, 'metrics listening');
    return {
      app,
      listeners: [stoppableHttpServer(metricsServer.server)],
      resources: [stopGraph, async () => void (await redis?.quit().catch(() => undefined))],
    };
  },
});
