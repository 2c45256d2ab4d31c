// The users service's public REST endpoints, as declared beside their handlers: what the OpenAPI
// document and the gateway's route table are generated from (tools/openapi/generate.mjs).
import { apiKeyEndpoints } from './api-keys/routes';
import { userEndpoints } from './users/routes';
import { webhookEndpoints } from './webhooks/routes';

export const usersEndpoints = [...userEndpoints.endpoints, ...apiKeyEndpoints.endpoints, ...webhookEndpoints.endpoints];
