// The federated GraphQL gateway: Apollo Gateway behind graphql-http, its limits (depth, cost,
// armor), its subgraph calls and metrics. Only the gateway imports it (tagged scope:gateway),
// so no subgraph service loads @apollo/gateway or graphql-armor; the subgraph side is
// @platform/graphql-kit.
import './request-state';
export { createFederatedGraph, type FederatedGraphOptions, type SelectedElements } from './federation';
export { type OperationWork } from './query-cost';
export { type LeftOutField } from './left-out-fields';
export { selectedElements } from './selected-elements';
