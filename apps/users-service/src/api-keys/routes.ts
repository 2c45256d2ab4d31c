// HTTP in and out for /api-keys (the caller's own keys: each endpoint declared once, its handler
// beside it), and the gateway's internal check of a key it was sent (mounted under /internal,
// service tokens only).
import { Router } from 'express';
import { principalOf } from '@platform/auth';
import { defineEndpoints, publicPath } from '@platform/endpoints';
import { ApiError, methodNotAllowed } from '@platform/errors';
import { mapListItems } from '@platform/paging';
import { parseBody, resourceId } from '@platform/validation';
import { CREDENTIAL_CHECKERS } from '../credentials/routes';
import { apiKeyPageRepresentation, apiKeyRepresentation, issuedApiKeyRepresentation, toApiKeyResponse, toIssuedApiKeyResponse } from './representation';
import { createApiKeyBody, listApiKeysQuery, rotateApiKeyBody, verifyApiKeyBody } from './schemas';
import type { ApiKeyService } from './service';

const apiKeyInPath = resourceId('API key');

export const apiKeyEndpoints = defineEndpoints('users', {
  listApiKeys: {
    method: 'GET', path: '/api-keys', summary: "List the caller's API keys, newest first (never their secrets)", access: 'signed-in', scope: 'api-keys',
    query: listApiKeysQuery,
    responses: { 200: { description: 'A page of API keys', body: apiKeyPageRepresentation } },
  },
  createApiKey: {
    method: 'POST', path: '/api-keys', summary: 'Issue an API key for a machine caller; the key is in this answer only', access: 'signed-in', scope: 'api-keys',
    body: createApiKeyBody, conflicts: ['API_KEY_LIMIT_REACHED'],
    responses: { 201: { description: 'The key, with its secret (shown once)', body: issuedApiKeyRepresentation, headers: ['Location'] } },
  },
  getApiKey: {
    method: 'GET', path: '/api-keys/:id', summary: "Read one of the caller's API keys", access: 'signed-in', scope: 'api-keys',
    params: { id: apiKeyInPath },
    responses: { 200: { description: 'The key (without its secret)', body: apiKeyRepresentation } },
  },
  revokeApiKey: {
    method: 'DELETE', path: '/api-keys/:id', summary: 'Revoke an API key: every gateway refuses it within 5 s', access: 'signed-in', scope: 'api-keys',
    params: { id: apiKeyInPath },
    responses: { 204: { description: 'Revoked' } },
  },
  rotateApiKey: {
    method: 'POST', path: '/api-keys/:id/rotation', summary: 'Replace an API key: a new key (shown once), the old one working for the overlap chosen (at most 7 days)', access: 'signed-in', scope: 'api-keys',
    params: { id: apiKeyInPath },
    body: rotateApiKeyBody, conflicts: ['API_KEY_NOT_ACTIVE', 'API_KEY_LIMIT_REACHED'],
    responses: { 201: { description: 'The new key, with its secret (shown once)', body: issuedApiKeyRepresentation, headers: ['Location'] } },
  },
});

export function apiKeysRoutes(keys: ApiKeyService) {
  return apiKeyEndpoints.routes({
    listApiKeys: async ({ principal, query, res }) => {
      res.json(mapListItems(await keys.list(principal, query), toApiKeyResponse));
    },
    createApiKey: async ({ principal, body, res }) => {
      const { row, key } = await keys.create(principal, body);
      res.status(201).location(publicPath('api-keys', row.id)).setHeader('Cache-Control', 'no-store').json(toIssuedApiKeyResponse(row, key));
    },
    getApiKey: async ({ principal, params, res }) => {
      res.json(toApiKeyResponse(await keys.get(principal, params.id)));
    },
    revokeApiKey: async ({ principal, params, res }) => {
      await keys.revoke(principal, params.id);
      res.status(204).end();
    },
    rotateApiKey: async ({ principal, params, body, res }) => {
      const { row, key } = await keys.rotate(principal, params.id, body);
      res.status(201).location(publicPath('api-keys', row.id)).setHeader('Cache-Control', 'no-store').json(toIssuedApiKeyResponse(row, key));
    },
  });
}

/** POST /internal/api-key-verifications {key}: the gateway's check. Always 200 with `valid`, so a refusal is never confused with a missing route. */
export function apiKeyVerificationRoutes(keys: ApiKeyService): Router {
  const router = Router();
  router
    .route('/api-key-verifications')
    .post(async (req, res) => {
      if (!CREDENTIAL_CHECKERS.includes(principalOf(res).userId)) throw ApiError.forbidden('Only the gateway verifies API keys.');
      const { key } = parseBody(verifyApiKeyBody, req.body);
      res.setHeader('Cache-Control', 'no-store').json(await keys.verify(key));
    })
    .all(methodNotAllowed);
  return router;
}
