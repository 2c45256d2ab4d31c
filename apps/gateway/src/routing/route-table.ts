// The public API, as data: every path the gateway serves, its methods, the service behind it,
// whether it needs a credential, and its rate-limit policy. Nothing here is written by hand: the
// services' rows are generated from their endpoint declarations (libs/endpoints, beside each
// handler) into service-routes.generated.ts by `node tools/openapi/generate.mjs`, and the
// gateway's own rows come from gateway-endpoints.ts. Paths are as clients send them after the
// version prefix (`/v1`). A route declared for a new major version (`version: 'v2'`) is served at
// `/v2/...` and replaces the earlier version's route of the same path and method there; every
// other route of the earlier version is served under `/v2` too, unchanged (API spec, Versioning
// rule 5). docs/evolving-the-api.md: "Shipping /v2 of one resource".
import { type ApiVersion, gatewayRoutesOf, type GatewayRoute, type Upstream } from '@platform/endpoints';
import { type PolicyName, policyTable } from '../rate-limit/policies';
import { gatewayEndpoints } from './gateway-endpoints';
import { serviceRoutes } from './service-routes.generated';

export type { ApiVersion, Upstream };

export interface RouteDefinition extends GatewayRoute {
  /** Its row of the rate-limit policy table (rate-limit/policies.ts); unset: `default`. */
  policy?: PolicyName;
}

/** The rows as the gateway uses them; a policy the table does not have stops the gateway at start. */
export function asRouteDefinitions(rows: readonly GatewayRoute[]): RouteDefinition[] {
  for (const row of rows) {
    if (row.policy !== undefined && !(row.policy in policyTable)) throw new Error(`The route ${row.pattern} names the rate-limit policy "${row.policy}", which rate-limit/policies.ts does not have`);
  }
  return rows as RouteDefinition[];
}

export const routeTable: RouteDefinition[] = asRouteDefinitions([...serviceRoutes, ...gatewayRoutesOf(gatewayEndpoints)]);
