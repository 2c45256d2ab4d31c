import './request-state';
export { issueAccessToken, roles, serviceTokenSource, TokenVerifier, type AccessToken, type Audience, type Principal, type Role } from './tokens';
export { adminOnly, assertOwnerOrAdmin, authenticate, isAdmin, principalOf, requireAdmin } from './access';
export { publishRevocation, REVOCATIONS_CHANNEL, revocationOf, type ApiKeyRevocation, type Revocation, type RevocationBus } from './revocations';
export { API_KEY_PREFIX, apiKeyIdOf, apiKeyScopes, looksLikeApiKey, newApiKeyText, scopeFor, type ApiKeyScope, type ScopedResource } from './api-keys';
export { emailKeyOf } from './email-key';
