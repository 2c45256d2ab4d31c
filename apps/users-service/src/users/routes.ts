// HTTP in and out for users and tokens.
import { Router, type RequestHandler } from 'express';
import { adminOnly, principalOf } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { mapListItems } from '@platform/paging';
import { expectedVersion } from '@platform/service-kit';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import { etagOf, toUserResponse } from './representation';
import { listUsersQuery, patchUserBody, replaceUserBody, signUpBody, tokenBody } from './schemas';
import type { UserService } from './service';

export function usersRoutes(users: UserService, authenticate: RequestHandler): Router {
  const router = Router();

  router
    .route('/users')
    .post(async (req, res) => {
      const user = await users.signUp(parseBody(signUpBody, req.body));
      res.status(201).location(`/v1/users/${user.id}`).setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    })
    .get(authenticate, adminOnly, async (req, res) => {
      res.json(mapListItems(await users.list(principalOf(res), parseQuery(listUsersQuery, req.query)), toUserResponse));
    })
    .all(methodNotAllowed);

  router
    .route('/users/:id')
    .get(authenticate, async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      const user = await users.get(principalOf(res), req.params.id as string);
      res.setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    })
    .patch(authenticate, async (req, res) => {
      const user = await users.patch(principalOf(res), req.params.id as string, parseBody(patchUserBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    })
    .put(authenticate, async (req, res) => {
      const user = await users.replace(principalOf(res), req.params.id as string, parseBody(replaceUserBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    })
    .delete(authenticate, async (req, res) => {
      await users.delete(principalOf(res), req.params.id as string);
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/tokens')
    .post(async (req, res) => {
      const { email, password } = parseBody(tokenBody, req.body);
      res.setHeader('Cache-Control', 'no-store').json(await users.issueToken(email, password));
    })
    .all(methodNotAllowed);

  return router;
}
