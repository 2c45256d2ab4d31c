// A subgraph over HTTP: the federation schema (`buildSubgraphSchema`) served by graphql-http, the
// GraphQL Foundation's reference GraphQL-over-HTTP server. Subgraphs only answer the gateway's
// planned queries, so they need no more than parse, validate and execute; parsing and
// validation are cached per query text (the gateway sends the same few documents over and over).
import './telemetry-off';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap';
import type { RequestHandler } from 'express';
import { type DocumentNode, GraphQLError, NoSchemaIntrospectionCustomRule, specifiedRules } from 'graphql';
import { createHandler } from 'graphql-http/lib/use/express';
import { authenticate, type Principal, type TokenVerifier } from '@platform/auth';
import { requireReadableBody } from '@platform/service-kit';
import { formatGraphQLError } from './graphql-errors';
import { documentCache } from './document-cache';
import { withOperationChoice } from './operation-choice';

export interface SubgraphContext {
  /** Undefined when the request carried no valid token; resolvers call `requirePrincipal`. */
  principal?: Principal;
  authorization?: string;
  /** Resolvers keep per-request state here (DataLoaders). */
  [key: PropertyKey]: unknown;
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
export function createSubgraphMiddleware(options: SubgraphOptions): RequestHandler {
  const schema = buildSubgraphSchema({ typeDefs: options.typeDefs, resolvers: options.resolvers as GraphQLResolverMap<unknown> });
  const rules = options.introspection ? specifiedRules : [...specifiedRules, NoSchemaIntrospectionCustomRule];
  const documents = documentCache();

  const handler = createHandler<SubgraphContext>({
    schema,
    // A function, so the list is this one array every time (graphql-http would copy an array);
    // an operationName the document lacks gets a rule saying so (graphql-http's own answer,
    // "Unable to detect operation AST", tells the caller nothing).
    validationRules: (_req, args) => withOperationChoice(rules, args.document, args.operationName),
    parse: documents.parse,
    validate: documents.validate,
    context: (req) => ({ principal: req.context.res.locals.principal, authorization: req.raw.headers.authorization }),
    // Suggestions stay: only the gateway talks to a subgraph, and it hides them from clients.
    formatError: formatGraphQLError({ hideSuggestions: false }),
  });
  // Only callers with a valid token reach the graph (the gateway always forwards the client's):
  // anyone else gets 401 in the error format, and never the subgraph's SDL (`_service { sdl }`).
  const authenticated = authenticate(options.verifier);
  return (req, res, next) => {
    res.locals.routePattern = req.baseUrl || '/graphql'; // logs and metrics name the subgraph's route, not "unmatched"
    Promise.resolve(
      authenticated(req, res, (error?: unknown) => {
        if (error) return next(error);
        // Unreadable JSON is refused here, in the error format: inside graphql-http it would be a bare 500.
        requireReadableBody(req);
        return (handler as unknown as RequestHandler)(req, res, next);
      }),
    ).catch(next);
  };
}
