import './telemetry-off';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap';
import type { RequestHandler } from 'express';
import { GraphQLError, type DocumentNode } from 'graphql';
import { type Principal, type TokenVerifier } from '@platform/auth';
import { ApiError } from '@platform/errors';

export interface SubgraphContext {
  /** Undefined when the request carried no valid token; resolvers call `requirePrincipal`. */
  principal?: Principal;
  authorization?: string;
}

/** GraphQL errors carry the REST error code in `extensions.code`. */
export function toGraphQLError(error: unknown): GraphQLError {
  if (error instanceof GraphQLError) return error;
  if (error instanceof ApiError) return new GraphQLError(error.message, { extensions: { code: error.code } });
  return new GraphQLError('An unexpected error occurred.', { extensions: { code: 'INTERNAL' } });
}

export function requirePrincipal(context: SubgraphContext): Principal {
  if (!context.principal) throw new GraphQLError('A valid bearer token is required.', { extensions: { code: 'UNAUTHENTICATED' } });
  return context.principal;
}

export interface SubgraphOptions {
  typeDefs: DocumentNode;
  /** Resolver map; resolvers receive a SubgraphContext (plus what they add per request). */
  resolvers: object;
  verifier: TokenVerifier;
  introspection: boolean;
}

/** The subgraph as express middleware for POST /graphql, with the caller's token verified. */
export async function createSubgraphMiddleware(options: SubgraphOptions): Promise<{ middleware: RequestHandler; stop: () => Promise<void> }> {
  const server = new ApolloServer<SubgraphContext>({
    schema: buildSubgraphSchema({ typeDefs: options.typeDefs, resolvers: options.resolvers as GraphQLResolverMap<unknown> }),
    introspection: options.introspection,
    csrfPrevention: true,
    // The process's graceful stop (service-kit) owns SIGTERM; Apollo re-raising it would cut the drain short.
    stopOnTerminationSignals: false,
    // Inline traces feed Apollo's hosted tooling, which this platform never talks to.
    plugins: [ApolloServerPluginInlineTraceDisabled()],
    formatError: (formatted, error) => {
      const original = (error as GraphQLError | undefined)?.originalError;
      if (original instanceof ApiError) return { ...formatted, message: original.message, extensions: { code: original.code } };
      const code = formatted.extensions?.code;
      if (code === 'INTERNAL_SERVER_ERROR' || code === undefined) return { message: 'An unexpected error occurred.', path: formatted.path, extensions: { code: 'INTERNAL' } };
      return { message: formatted.message, path: formatted.path, locations: formatted.locations, extensions: { code } };
    },
  });
  await server.start();
  const middleware = expressMiddleware(server, {
    context: async ({ req }) => {
      const authorization = req.headers.authorization;
      if (!authorization) return {};
      try {
        return { principal: await options.verifier.verifyHeader(authorization), authorization };
      } catch {
        return { authorization };
      }
    },
  });
  return { middleware, stop: () => server.stop() };
}
