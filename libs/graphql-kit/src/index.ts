import './request-state';
import './telemetry-off';
export { createSubgraphMiddleware, requirePrincipal, type SubgraphContext, type SubgraphOptions } from './subgraph';
export { default as gql } from 'graphql-tag';
export { createFederatedGraph, type FederatedGraphOptions } from './federation';
export { DateTime } from './date-time';
export { type OperationWork } from './query-cost';
export { type LeftOutField } from './left-out-fields';
export { selectedElements } from './selected-elements';
