// The catalog's public REST endpoints, as declared beside their handlers: what the OpenAPI
// document and the gateway's route table are generated from (tools/openapi/generate.mjs).
import { productEndpoints } from './products/routes';
import { reviewEndpoints } from './reviews/routes';

export const catalogEndpoints = [...productEndpoints.endpoints, ...reviewEndpoints.endpoints];
