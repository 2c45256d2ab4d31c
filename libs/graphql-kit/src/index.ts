// The subgraph side of GraphQL, what every service serving a subgraph loads: the subgraph
// server, the scalars, and the pieces the gateway's library (@platform/graphql-gateway) shares
// with it. Nothing here loads @apollo/gateway or graphql-armor.
import './telemetry-off';
export { createSubgraphMiddleware, requirePrincipal, type SubgraphContext, type SubgraphOptions } from './subgraph';
export { default as gql } from 'graphql-tag';
export { DateTime } from './date-time';
export { formatGraphQLError, graphQLErrorOf, graphQLRefusal, inArgument } from './graphql-errors';
export { documentCache, type DocumentCache } from './document-cache';
export { MAX_NAME_LENGTH, withOperationChoice } from './operation-choice';
