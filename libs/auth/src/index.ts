import './request-state';
export { issueAccessToken, roles, serviceTokenSource, TokenVerifier, type AccessToken, type Audience, type Principal, type Role } from './tokens';
export { adminOnly, assertOwnerOrAdmin, authenticate, isAdmin, principalOf, requireAdmin } from './access';
export { publishRevocation, REVOCATIONS_CHANNEL, revocationOf, type Revocation, type RevocationBus } from './revocations';
