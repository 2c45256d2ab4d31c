// gateway process: see runService for the life cycle; metrics listen on their own port.
import './instrument'; // first: tracing must patch modules before they load
import path from 'node:path';
import express from 'express';
import { configOrExit, listen, runService, stoppableHttpServer } from '@platform/service-kit';
import { createGateway } from './app';
import { loadGatewayConfig } from './config';

const config = configOrExit('gateway', loadGatewayConfig);

runService({
  name: 'gateway',
  config,
  async build({ logger, health, metrics }) {
    const gateway = await createGateway(config, { logger, health, metrics }, { supergraphPath: path.join(__dirname, 'supergraph.graphql'), openapiPath: path.join(__dirname, 'openapi.json'), trustedDocumentsPath: path.join(__dirname, 'trusted-documents.json'), pagesDir: path.join(__dirname, 'pages') });
    const metricsApp = express().get('/metrics', metrics.handler);
    const metricsServer = await listen(metricsApp, config.METRICS_PORT, config.LISTEN_HOST);
    logger.info({ port: metricsServer.port }, 'metrics listening');
    return {
      app: gateway.app,
      connections: gateway.connections,
      listeners: [stoppableHttpServer(metricsServer.server)],
      resources: gateway.resources,
    };
  },
});
