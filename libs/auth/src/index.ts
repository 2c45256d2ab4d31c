export { issueAccessToken, roles, TokenVerifier, type AccessToken, type Principal, type Role } from './tokens';
export { assertOwnerOrAdmin, authenticate, isAdmin, principalOf, requireAdmin } from './access';
