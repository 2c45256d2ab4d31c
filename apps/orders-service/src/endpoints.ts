// The orders service's public REST endpoints, as declared beside their handlers: what the OpenAPI
// document and the gateway's route table are generated from (tools/openapi/generate.mjs).
import { cancellationEndpoints } from './cancellations/routes';
import { orderEndpoints } from './orders/routes';
import { shipmentEndpoints } from './shipments/routes';

export const ordersEndpoints = [...orderEndpoints.endpoints, ...shipmentEndpoints.endpoints, ...cancellationEndpoints.endpoints];
