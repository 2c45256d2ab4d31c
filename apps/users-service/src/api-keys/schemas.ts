// Request shapes of the api-keys resource. Unknown fields and parameters are refused.
import { apiKeyScopes } from '@platform/auth';
import { pagingQueryShape } from '@platform/paging';
import { z } from '@platform/validation';

/** A key's longest overlap with its replacement: a week, enough for a weekly deploy to pick up the new key. */
export const MAX_ROTATION_OVERLAP_S = 7 * 86_400;

export const createApiKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(100).meta({ description: 'What the key is for, to recognise it in the list.' }),
  scopes: z
    .array(z.enum(apiKeyScopes))
    .min(1)
    .max(apiKeyScopes.length)
    .refine((scopes) => new Set(scopes).size === scopes.length, { message: 'scopes must not repeat', params: { code: 'NOT_ALLOWED' } })
    .meta({ description: `What the key may do, narrowing its owner's permissions: ${apiKeyScopes.join(', ')}. \`:read\` covers GET and HEAD (and GraphQL queries), \`:write\` every other method (and GraphQL mutations).` }),
  expiresAt: z.iso.datetime().optional().meta({ description: 'When the key stops working (UTC, in the future); unset: never.' }),
});

export const rotateApiKeyBody = z.strictObject({
  overlapSeconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_ROTATION_OVERLAP_S)
    .meta({ description: `How long the old key keeps working beside the new one, in seconds (0: it stops now; at most ${MAX_ROTATION_OVERLAP_S}, 7 days).` }),
});

/** The caller's keys, newest first; no other sort or filter. */
export const listApiKeysQuery = z.strictObject({ size: pagingQueryShape.size, cursor: pagingQueryShape.cursor });

export const verifyApiKeyBody = z.strictObject({ key: z.string().min(1).max(200) });

export type CreateApiKeyInput = z.output<typeof createApiKeyBody>;
export type RotateApiKeyInput = z.output<typeof rotateApiKeyBody>;
export type ListApiKeysQuery = z.output<typeof listApiKeysQuery>;
