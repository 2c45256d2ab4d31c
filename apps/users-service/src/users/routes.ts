// HTTP in and out for users and tokens: the two calls that need no token (sign-up and sign-in)
// in one router, mounted above the app's authentication middleware; everything else below it.
import { Router } from 'express';
import { adminOnly, principalOf } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { mapListItems, pageHeaders } from '@platform/paging';
import { expectedVersion } from '@platform/service-kit';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import { etagOf, toUserResponse } from './representation';
import { listUsersQuery, patchUserBody, replaceUserBody, signUpBody, tokenBody } from './schemas';
import type { UserService } from './service';

/** POST /users (sign-up) and POST /tokens (sign-in). */
export function signInRoutes(users: UserService): Router {
  const router = Router();

  // Other methods on /users go on to the authenticated routes below.
  router.post('/users', async (req, res) => {
    const user = await users.signUp(parseBody(signUpBody, req.body));
    res.status(201).location(`/v1/users/${user.id}`).setHeader('ETag', etagOf(user)).json(toUserResponse(user));
  });

  router
    .route('/tokens')
    .post(async (req, res) => {
      const { email, password } = parseBody(tokenBody, req.body);
      res.setHeader('Cache-Control', 'no-store').json(await users.issueToken(email, password));
    })
    .all(methodNotAllowed);

  return router;
}

/** /users and /users/:id, for a caller the authentication middleware has identified. */
export function usersRoutes(users: UserService): Router {
  const router = Router();

  router
    .route('/users')
    .get(adminOnly, async (req, res) => {
      const page = await users.list(principalOf(res), parseQuery(listUsersQuery, req.query));
      res.set(pageHeaders(page)).json(mapListItems(page, toUserResponse));
    })
    .all(methodNotAllowed);

  router
    .route('/users/:id')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      const user = await users.get(principalOf(res), req.params.id as string);
      res.setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    })
    .patch(async (req, res) => {
      const user = await users.patch(principalOf(res), req.params.id as string, parseBody(patchUserBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    })
    .put(async (req, res) => {
      const user = await users.replace(principalOf(res), req.params.id as string, parseBody(replaceUserBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    })
    .delete(async (req, res) => {
      await users.delete(principalOf(res), req.params.id as string);
      res.status(204).end();
    })
    .all(methodNotAllowed);

  return router;
}
