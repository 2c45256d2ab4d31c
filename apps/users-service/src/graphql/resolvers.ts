// The users subgraph: the same UserService as REST, so the same ownership and validation rules.
// Errors are thrown as they are: graphql-kit's formatGraphQLError gives a domain error the code REST gives it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import DataLoader from 'dataloader';
import type { Principal } from '@platform/auth';
import { gql, inArgument, requirePrincipal, type SubgraphContext } from '@platform/graphql-kit';
import { parseArgument } from '@platform/validation';
import type { UserRow } from '../users/repository';
import { toUserResponse } from '../users/representation';
import { patchUserBody } from '../users/schemas';
import type { UserService } from '../users/service';

export const usersTypeDefs = gql(readFileSync(path.join(__dirname, 'schema.graphql'), 'utf8'));

interface UsersContext extends SubgraphContext {
  userLoader?: DataLoader<string, UserRow | null>;
}

/** One query per request for every User the gateway asks this subgraph to resolve. */
function userLoaderOf(context: UsersContext, principal: Principal, users: UserService): DataLoader<string, UserRow | null> {
  context.userLoader ??= new DataLoader(async (ids) => {
    const found = await users.getMany(principal, ids);
    return ids.map((id) => found.get(id) ?? null);
  });
  return context.userLoader;
}

/** PATCH /users/me's rules without the password: a credential changes only through REST. */
const updateMeInput = patchUserBody.omit({ password: true });

export function usersResolvers(users: UserService) {
  return {
    Query: {
      me: async (_: unknown, __: unknown, context: UsersContext) => toUserResponse(await users.get(requirePrincipal(context), 'me')),
      user: async (_: unknown, args: { id: string }, context: UsersContext) => toUserResponse(await users.get(requirePrincipal(context), args.id)),
    },
    Mutation: {
      updateMe: async (_: unknown, args: { input: unknown }, context: UsersContext) => {
        const principal = requirePrincipal(context);
        const input = parseArgument(updateMeInput, args.input, 'input');
        return toUserResponse(await users.patch(principal, principal.userId, input).catch(inArgument('input')));
      },
    },
    User: {
      __resolveReference: async (reference: { id: string }, context: UsersContext) => {
        const user = await userLoaderOf(context, requirePrincipal(context), users).load(reference.id);
        return user ? toUserResponse(user) : null;
      },
    },
  };
}
