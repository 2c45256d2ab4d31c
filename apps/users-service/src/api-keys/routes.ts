// HTTP in and out for /api-keys (the caller's own keys), and the gateway's internal check of a
// key it was sent (mounted under /internal, service tokens only).
import { Router } from 'express';
import { principalOf } from '@platform/auth';
import { ApiError, methodNotAllowed } from '@platform/errors';
import { mapListItems } from '@platform/paging';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import { CREDENTIAL_CHECKERS } from '../credentials/routes';
import { toApiKeyResponse, toIssuedApiKeyResponse } from './representation';
import { createApiKeyBody, listApiKeysQuery, rotateApiKeyBody, verifyApiKeyBody } from './schemas';
import type { ApiKeyService } from './service';

export function apiKeysRoutes(keys: ApiKeyService): Router {
  const router = Router();

  router
    .route('/api-keys')
    .get(async (req, res) => {
      res.json(mapListItems(await keys.list(principalOf(res), parseQuery(listApiKeysQuery, req.query)), toApiKeyResponse));
    })
    .post(async (req, res) => {
      const { row, key } = await keys.create(principalOf(res), parseBody(createApiKeyBody, req.body));
      res.status(201).location(`/v1/api-keys/${row.id}`).setHeader('Cache-Control', 'no-store').json(toIssuedApiKeyResponse(row, key));
    })
    .all(methodNotAllowed);

  router
    .route('/api-keys/:id')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      res.json(toApiKeyResponse(await keys.get(principalOf(res), req.params.id as string)));
    })
    .delete(async (req, res) => {
      await keys.revoke(principalOf(res), req.params.id as string);
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/api-keys/:id/rotation')
    .post(async (req, res) => {
      const { row, key } = await keys.rotate(principalOf(res), req.params.id as string, parseBody(rotateApiKeyBody, req.body));
      res.status(201).location(`/v1/api-keys/${row.id}`).setHeader('Cache-Control', 'no-store').json(toIssuedApiKeyResponse(row, key));
    })
    .all(methodNotAllowed);

  return router;
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
