// HTTP in and out for users and tokens: each endpoint declared once, its handler beside it. The
// two that need no token (sign-up and sign-in) are declared `public`, so they are mounted above
// the app's token check; everything else below it.
import { defineEndpoints, publicPath } from '@platform/endpoints';
import { mapListItems, pageHeaders } from '@platform/paging';
import { etagOf, tokenRepresentation, toUserResponse, userPageRepresentation, userRepresentation } from './representation';
import { listUsersQuery, patchUserBody, replaceUserBody, signUpBody, tokenBody, userInPath, userSortFields } from './schemas';
import type { UserService } from './service';

export const userEndpoints = defineEndpoints('users', {
  signUp: {
    method: 'POST', path: '/users', summary: 'Sign up (public)', access: 'public', policy: 'sign-up',
    body: signUpBody, conflicts: ['EMAIL_TAKEN'],
    responses: { 201: { description: 'The created user', body: userRepresentation, headers: ['Location', 'ETag'] } },
  },
  listUsers: {
    method: 'GET', path: '/users', summary: 'List users (admin)', access: 'admin', scope: 'users',
    query: listUsersQuery, sortFields: userSortFields,
    responses: { 200: { description: 'A page of users', body: userPageRepresentation } },
  },
  getUser: {
    method: 'GET', path: '/users/:id', summary: 'Read a user (`me` for the caller)', access: 'signed-in', scope: 'users',
    params: { id: userInPath },
    responses: { 200: { description: 'The user', body: userRepresentation, headers: ['ETag'] } },
  },
  updateUser: {
    method: 'PATCH', path: '/users/:id', summary: 'Change the fields sent', access: 'signed-in', scope: 'users',
    params: { id: userInPath },
    body: patchUserBody, ifMatch: true, conflicts: ['EMAIL_TAKEN', 'CONFLICT'],
    responses: { 200: { description: 'The user', body: userRepresentation, headers: ['ETag'] } },
  },
  replaceUser: {
    method: 'PUT', path: '/users/:id', summary: 'Replace the user; fields not sent are cleared', access: 'signed-in', scope: 'users',
    params: { id: userInPath },
    body: replaceUserBody, ifMatch: true, conflicts: ['EMAIL_TAKEN', 'CONFLICT'],
    responses: { 200: { description: 'The user', body: userRepresentation, headers: ['ETag'] } },
  },
  deleteUser: {
    method: 'DELETE', path: '/users/:id', summary: 'Delete a user', access: 'signed-in', scope: 'users',
    params: { id: userInPath }, ifMatch: true,
    responses: { 204: { description: 'Deleted' } },
  },
  createToken: {
    method: 'POST', path: '/tokens', summary: 'Exchange email and password for an access token (public)', access: 'public', policy: 'sign-in',
    body: tokenBody,
    responses: { 200: { description: 'A bearer token', body: tokenRepresentation } },
  },
});

export function usersRoutes(users: UserService) {
  return userEndpoints.routes({
    signUp: async ({ body, res }) => {
      const user = await users.signUp(body);
      res.status(201).location(publicPath('users', user.id)).setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    },
    listUsers: async ({ principal, query, res }) => {
      const page = await users.list(principal, query);
      res.set(pageHeaders(page)).json(mapListItems(page, toUserResponse));
    },
    getUser: async ({ principal, params, res }) => {
      const user = await users.get(principal, params.id);
      res.setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    },
    updateUser: async ({ principal, params, body, expectedVersion, res }) => {
      const user = await users.patch(principal, params.id, body, expectedVersion);
      res.setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    },
    replaceUser: async ({ principal, params, body, expectedVersion, res }) => {
      const user = await users.replace(principal, params.id, body, expectedVersion);
      res.setHeader('ETag', etagOf(user)).json(toUserResponse(user));
    },
    deleteUser: async ({ principal, params, expectedVersion, res }) => {
      await users.delete(principal, params.id, expectedVersion);
      res.status(204).end();
    },
    createToken: async ({ body, res }) => {
      res.setHeader('Cache-Control', 'no-store').json(await users.issueToken(body.email, body.password));
    },
  });
}
