// Every endpoint of the public API, as the services and the gateway declare them beside their
// handlers: the OpenAPI document (document.ts) and the gateway's route table
// (apps/gateway/src/routing/service-routes.generated.ts) are built from this list, in this order.
import { type Endpoint, gatewayRoutesOf, type GatewayRoute } from '@platform/endpoints';
// Apps have no import path (nothing may import an app); the generator alone reads them.
/* eslint-disable @nx/enforce-module-boundaries */
import { usersEndpoints } from '../../apps/users-service/src/endpoints';
import { ordersEndpoints } from '../../apps/orders-service/src/endpoints';
import { catalogEndpoints } from '../../apps/catalog-service/src/endpoints';
import { inventoryEndpoints } from '../../apps/inventory-service/src/endpoints';
import { gatewayEndpoints } from '../../apps/gateway/src/routing/gateway-endpoints';
/* eslint-enable @nx/enforce-module-boundaries */

/** What the services answer, routed by the gateway. */
export const serviceEndpoints: Endpoint[] = [...usersEndpoints, ...ordersEndpoints, ...catalogEndpoints, ...inventoryEndpoints];

/** Everything the gateway serves at `/v1/...`: the services' endpoints, then its own. */
export const apiEndpoints: Endpoint[] = [...serviceEndpoints, ...gatewayEndpoints];

/** The gateway's rows for the services' endpoints, one JSON row a line, as the generated module declares them. */
export function serviceRoutesModule(endpoints: readonly Endpoint[] = serviceEndpoints): string {
  const rows: GatewayRoute[] = gatewayRoutesOf(endpoints);
  return `import type { GatewayRoute } from '@platform/endpoints';\n\n/** The services' endpoints as the gateway routes them (see route-table.ts). */\nexport const serviceRoutes: GatewayRoute[] = [\n${rows.map((row) => `  ${JSON.stringify(row)},\n`).join('')}];\n`;
}
