// The public shape of an API key. The key's hash never leaves this module; the key itself exists
// only in the answer that creates it.
import { apiKeyScopes } from '@platform/auth';
import { component } from '@platform/endpoints';
import { listEnvelopeSchema } from '@platform/paging';
import { idField, z } from '@platform/validation';
import type { ApiKeyRow } from './repository';

export const apiKeyStatuses = ['ACTIVE', 'EXPIRED', 'REVOKED'] as const;

export const apiKeyRepresentation = component('ApiKey', z.object({
  id: idField(),
  name: z.string(),
  scopes: z.array(z.enum(apiKeyScopes)),
  hint: z.string().meta({ description: 'The key\'s prefix and last 4 characters (opk_…AbCd), to tell keys apart; the rest is never shown again.' }),
  status: z.enum(apiKeyStatuses),
  createdAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().nullable(),
  revokedAt: z.iso.datetime().nullable(),
  lastUsedAt: z.iso.datetime().nullable().meta({ description: 'The last call made with the key, to the minute (written at most once a minute).' }),
  rotatedFromId: idField().nullable().meta({ description: 'The key this one replaced by rotation.' }),
}));

export const apiKeyPageRepresentation = component('ApiKeyPage', listEnvelopeSchema(apiKeyRepresentation));

/** POST /api-keys and a rotation: the key with its secret, shown this once. */
export const issuedApiKeyRepresentation = component('IssuedApiKey', apiKeyRepresentation.extend({
  key: z.string().meta({ description: 'The key: send it as `Authorization: Bearer <key>` or `X-Api-Key: <key>`. Shown only in this answer; store it now.' }),
}));

export type ApiKeyResponse = z.infer<typeof apiKeyRepresentation>;
export type IssuedApiKeyResponse = z.infer<typeof issuedApiKeyRepresentation>;

export function statusOf(row: Pick<ApiKeyRow, 'revokedAt' | 'expiresAt'>, now = Date.now()): (typeof apiKeyStatuses)[number] {
  if (row.revokedAt) return 'REVOKED';
  if (row.expiresAt && row.expiresAt.getTime() <= now) return 'EXPIRED';
  return 'ACTIVE';
}

export function toApiKeyResponse(row: ApiKeyRow): ApiKeyResponse {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes as ApiKeyResponse['scopes'],
    hint: row.hint,
    status: statusOf(row),
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt?.toISOString() ?? null,
    revokedAt: row.revokedAt?.toISOString() ?? null,
    lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
    rotatedFromId: row.rotatedFromId,
  };
}

export function toIssuedApiKeyResponse(row: ApiKeyRow, key: string): IssuedApiKeyResponse {
  return { ...toApiKeyResponse(row), key };
}
