// Who may do what. Someone else's resource answers 404 (its existence stays hidden); an
// admin-only operation answers 403 to a customer.
import type { RequestHandler, Response } from 'express';
import { ApiError } from '@platform/errors';
import type { Principal, TokenVerifier } from './tokens';

/** Verifies the bearer token and stores the principal for the handlers. */
export function authenticate(verifier: TokenVerifier): RequestHandler {
  return async (req, res, next) => {
    res.locals.principal = await verifier.verifyHeader(req.headers.authorization);
    next();
  };
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal;
  if (!principal) throw ApiError.unauthenticated();
  return principal;
}

export function isAdmin(principal: Principal): boolean {
  return principal.role === 'admin';
}

export function requireAdmin(principal: Principal): void {
  if (!isAdmin(principal)) throw ApiError.forbidden('This operation needs the admin role.');
}

/**
 * Mounted before an admin-only route's handler: a customer gets 403 before anything of the
 * request is read, so the answer does not depend on the body it sent.
 */
export const adminOnly: RequestHandler = (_req, res, next) => {
  requireAdmin(principalOf(res));
  next();
};

/** Throws 404 unless the principal owns the resource or is an admin. */
export function assertOwnerOrAdmin(principal: Principal, ownerId: string, what: string): void {
  if (!isAdmin(principal) && principal.userId !== ownerId) throw ApiError.notFound(what);
}
