// The gateway's revocation check: a user's current credential version. Internal: only callers
// with a service token of an allowed service (the gateway) get an answer, and the gateway's route
// table has no path to it, so clients cannot reach it through the public door.
import { Router } from 'express';
import { principalOf } from '@platform/auth';
import { ApiError, methodNotAllowed } from '@platform/errors';
import type { UserService } from '../users/service';

export const CREDENTIAL_CHECKERS = ['gateway'];

/** Mounted under /internal, behind authentication with service tokens. */
export function credentialsRoutes(users: UserService): Router {
  const router = Router();
  router
    .route('/credentials/:id')
    .get(async (req, res) => {
      if (!CREDENTIAL_CHECKERS.includes(principalOf(res).userId)) throw ApiError.forbidden('Only the gateway reads credential versions.');
      // A deleted user is an answer too (exists: false), never a 404 the gateway could confuse with a missing route.
      const credentialVersion = await users.credentialVersionOf(req.params.id as string);
      res.setHeader('Cache-Control', 'no-store').json({ userId: req.params.id, exists: credentialVersion !== null, credentialVersion });
    })
    .all(methodNotAllowed);
  return router;
}
