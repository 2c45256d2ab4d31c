// The users subgraph: the same UserService as REST, so the same ownership rules.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import DataLoader from 'dataloader';
import type { Principal } from '@platform/auth';
import { ApiError } from '@platform/errors';
import { gql, requirePrincipal, toGraphQLError, type SubgraphContext } from '@platform/graphql-kit';
import { isId } from '@platform/ids';
import type { UserRow } from '../users/repository';
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

export function usersResolvers(users: UserService) {
  return {
    Query: {
      me: async (_: unknown, __: unknown, context: UsersContext) => {
        try {
          return await users.get(requirePrincipal(context), 'me');
        } catch (error) {
          throw toGraphQLError(error);
        }
      },
      user: async (_: unknown, args: { id: string }, context: UsersContext) => {
        try {
          if (!isId(args.id)) throw ApiError.notFound('User');
          return await users.get(requirePrincipal(context), args.id);
        } catch (error) {
          throw toGraphQLError(error);
        }
      },
    },
    User: {
      __resolveReference: async (reference: { id: string }, context: UsersContext) => {
        const principal = context.principal;
        if (!principal || !isId(reference.id)) return null;
        return userLoaderOf(context, principal, users).load(reference.id);
      },
    },
  };
}
