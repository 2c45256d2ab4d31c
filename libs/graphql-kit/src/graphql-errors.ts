// The GraphQL mapping of errors, one for every subgraph and the gateway: what a GraphQL client
// sees of anything that went wrong. A domain error (or an ApiError of a transport refusal) keeps
// its message, its code in `extensions.code` (the same code REST sends) and its per-field list in
// `extensions.errors`; GraphQL's own errors keep theirs; anything else is `INTERNAL` with nothing
// of its message.
import { GraphQLError, type GraphQLErrorOptions } from 'graphql';
import { ApiError, DomainError, type GraphQLErrorCode } from '@platform/errors';

/**
 * A refusal only GraphQL has (a parse or validation failure, a limit: graphqlErrorCatalog in
 * @platform/errors), the one way such a code is raised: typed by this parameter, so a code the
 * catalog lacks does not compile. `extensions` go beside the code (a limit's `{requested, limit}`).
 */
export function graphQLRefusal(message: string, code: GraphQLErrorCode, options: Omit<GraphQLErrorOptions, 'extensions' | 'originalError'> & { extensions?: { [beside: string]: unknown; code?: never } } = {}): GraphQLError {
  return new GraphQLError(message, { ...options, extensions: { code, ...options.extensions } });
}

export function graphQLErrorOf(error: ApiError | DomainError, path?: readonly (string | number)[]): GraphQLError {
  return new GraphQLError(error.message, { path, extensions: { code: error.code, ...(error.fieldErrors.length ? { errors: error.fieldErrors } : {}) } });
}

/**
 * For a resolver whose use case checks the fields of one argument (a REST body's rules under
 * `input`): a domain error's fields named as the client sent them (`input.items[0].quantity`), as
 * parseArgument names its own refusals. `useCase(...).catch(inArgument('input'))`.
 */
export function inArgument(argument: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof DomainError && error.fieldErrors.length) throw error.withFieldNames((field) => `${argument}.${field}`);
    throw error;
  };
}

/** graphql-js's hint at names the schema has ("Did you mean "name"?"), in every form it takes. */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

function internal(path?: readonly (string | number)[]): GraphQLError {
  return new GraphQLError('An unexpected error occurred.', { path, extensions: { code: 'INTERNAL' } });
}

function clientErrorOf(error: Readonly<GraphQLError | Error>): GraphQLError {
  // A resolver's throw reaches here wrapped (originalError); a fetch the gateway failed, as itself.
  const original = error instanceof GraphQLError ? error.originalError : error;
  const path = error instanceof GraphQLError ? error.path : undefined;
  if (original instanceof DomainError || original instanceof ApiError) return graphQLErrorOf(original, path);
  if (!(error instanceof GraphQLError)) return internal();
  // Any other Error is a fault: its message may hold internals. (At the gateway, a subgraph's
  // error is a plain object here, already in this shape: it passes.)
  if (original instanceof Error && !(original instanceof GraphQLError)) return internal(path);
  const code = (error.extensions?.code as string | undefined) ?? (error.path ? 'INTERNAL' : 'GRAPHQL_VALIDATION_FAILED');
  if (code === 'INTERNAL_SERVER_ERROR' || code === 'INTERNAL') return internal(path);
  // Apollo Gateway names the subgraph an error came from (`serviceName`): internal topology, not the client's business.
  const { serviceName: _subgraph, ...extensions }: Record<string, unknown> = { ...error.extensions, code };
  return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, extensions });
}

/**
 * The `formatError` of every GraphQL server here. With `hideSuggestions` (introspection off), no
 * "Did you mean …?" either: a suggestion would name the fields and values the schema hides.
 */
export function formatGraphQLError(options: { hideSuggestions: boolean }): (error: Readonly<GraphQLError | Error>) => GraphQLError {
  return (error) => {
    const formatted = clientErrorOf(error);
    const message = options.hideSuggestions ? formatted.message.replace(SUGGESTION, '') : formatted.message;
    if (message === formatted.message) return formatted;
    return new GraphQLError(message, { nodes: formatted.nodes, source: formatted.source, positions: formatted.positions, path: formatted.path, extensions: formatted.extensions });
  };
}
