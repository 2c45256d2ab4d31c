// The gateway's GraphQL: Apollo Gateway over a supergraph composed at build time (no
// introspection of subgraphs at start), the caller's credential forwarded to every subgraph,
// and limits on depth, cost, aliases, tokens and time.
import './telemetry-off';
import { ApolloGateway, type GraphQLDataSourceProcessOptions, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled, ApolloServerPluginUsageReportingDisabled, ApolloServerPluginSchemaReportingDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { Agent } from 'node:http';
import type { RequestHandler } from 'express';
import nodeFetch from 'node-fetch';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { outgoingBudgetMs, TIMEOUT_HEADER } from '@platform/service-kit';
import { graphMetrics } from './operation-metrics';

interface GatewayContext {
  authorization?: string;
  traceId?: string;
}

export interface FederatedGraphOptions {
  supergraphSdl: string;
  /** Subgraph name (as composed) → its URL. */
  subgraphUrls: Record<string, string>;
  introspection: boolean;
  /** Budget for a whole query when the request carries none. */
  timeoutMs: number;
  /** Where operation and subgraph-call metrics go, and the one log line per operation. */
  registry: Registry;
  logger: Logger;
}

class CredentialForwardingSource extends RemoteGraphQLDataSource<GatewayContext> {
  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    if (context.authorization) request.http?.headers.set('authorization', context.authorization);
  }
}

export async function createFederatedGraph(options: FederatedGraphOptions): Promise<{ middleware: RequestHandler; stop: () => Promise<void> }> {
  // node-fetch (Apollo's own default) on a keep-alive agent: measurably quicker per call than
  // the global fetch, and a query plan makes several calls in sequence.
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const metrics = graphMetrics(options.registry, options.logger);
  const gateway = new ApolloGateway({
    supergraphSdl: options.supergraphSdl,
    buildService: ({ name }) =>
      new CredentialForwardingSource({
        url: options.subgraphUrls[name],
        // Every subgraph call carries the time left; none outlives the client's request.
        fetcher: async (url, init) => {
          const budget = outgoingBudgetMs(options.timeoutMs, 'a subgraph');
          const headers = { ...(init?.headers as Record<string, string> | undefined), [TIMEOUT_HEADER]: String(budget) };
          const done = metrics.subgraphCall(name);
          try {
            const response = await nodeFetch(url, { ...(init as object), headers, agent, signal: AbortSignal.timeout(budget) });
            done(response.ok ? 'ok' : 'error');
            return response as never;
          } catch (error) {
            done('error');
            throw error;
          }
        },
      }),
  });
  const armor = new ApolloArmor({
    maxDepth: { n: 10 },
    maxAliases: { n: 15 },
    maxDirectives: { n: 20 },
    maxTokens: { n: 2_000 },
    costLimit: { maxCost: 5_000 },
    blockFieldSuggestion: { enabled: !options.introspection },
  });
  const protection = armor.protect();
  const server = new ApolloServer<GatewayContext>({
    gateway,
    introspection: options.introspection,
    csrfPrevention: true,
    // The process's graceful stop (service-kit) owns SIGTERM; Apollo re-raising it would cut the drain short.
    stopOnTerminationSignals: false,
    allowBatchedHttpRequests: false,
    includeStacktraceInErrorResponses: false,
    validationRules: protection.validationRules,
    plugins: [metrics.plugin, ...protection.plugins, ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginUsageReportingDisabled(), ApolloServerPluginSchemaReportingDisabled()],
    formatError: (formatted) => {
      const code = (formatted.extensions?.code as string | undefined) ?? 'INTERNAL';
      if (code === 'INTERNAL_SERVER_ERROR' || code === 'INTERNAL') return { message: 'An unexpected error occurred.', path: formatted.path, extensions: { code: 'INTERNAL' } };
      return { message: formatted.message, path: formatted.path, locations: formatted.locations, extensions: { code } };
    },
  });
  await server.start();
  return {
    middleware: expressMiddleware(server, { context: async ({ req, res }) => ({ authorization: req.headers.authorization, traceId: res.locals.traceId as string | undefined }) }),
    stop: async () => {
      await server.stop();
      agent.destroy();
    },
  };
}
