// The inventory service's public REST endpoints, as declared beside their handlers: what the
// OpenAPI document and the gateway's route table are generated from (tools/openapi/generate.mjs).
import { stockLevelEndpoints } from './stock/routes';

export const inventoryEndpoints = [...stockLevelEndpoints.endpoints];
