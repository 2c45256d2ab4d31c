// An ApiError as GraphQL clients see it, in the subgraphs (what a resolver threw) and at the
// gateway (request parameters it cannot read): the message, the REST code in `extensions.code`
// and the per-field list in `extensions.errors`.
import { GraphQLError } from 'graphql';
import type { ApiError } from '@platform/errors';

export function graphQLErrorOf(error: ApiError, path?: readonly (string | number)[]): GraphQLError {
  return new GraphQLError(error.message, { path, extensions: { code: error.code, ...(error.fieldErrors.length ? { errors: error.fieldErrors } : {}) } });
}
