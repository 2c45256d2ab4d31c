// One vocabulary, every transport: a domain error gives GraphQL clients the code and field errors
// REST clients get, whether a subgraph's resolver threw it or it reached the gateway as itself.
import { GraphQLError } from 'graphql';
import { ApiError, asApiError, Conflict, type DomainError, Forbidden, Invalid, NotFound, OutOfStock, Unauthenticated, VersionMismatch } from '@platform/errors';
import { formatGraphQLError, graphQLRefusal } from './graphql-errors';

const format = formatGraphQLError({ hideSuggestions: true });

const errors: DomainError[] = [
  new Invalid('quantity must be at most 1000000', [{ field: 'items[0].quantity', code: 'OUT_OF_RANGE', message: 'quantity must be at most 1000000' }]),
  NotFound.of('Order'),
  new OutOfStock('Not enough stock for some items; nothing was reserved.', ['A'], [{ field: 'items[0].quantity', code: 'OUT_OF_RANGE', message: 'Not enough stock of p-1.' }]),
  new Conflict('ORDER_NOT_EDITABLE', 'Only a PENDING order can change.'),
  new VersionMismatch(),
  new Forbidden(),
  new Unauthenticated(),
];

describe.each(errors.map((error) => [error.code, error] as const))('%s', (_code, error) => {
  const rest = asApiError(error);
  const expected = { message: rest.message, extensions: { code: rest.code, ...(rest.fieldErrors.length ? { errors: rest.fieldErrors } : {}) } };

  it('thrown by a resolver: the code, message and field errors REST sends', () => {
    const located = new GraphQLError(error.message, { path: ['order'], originalError: error });
    expect(format(located).toJSON()).toEqual({ ...expected, path: ['order'] });
  });

  it('met by the gateway as itself (a failed fetch): the same', () => {
    expect(format(error).toJSON()).toEqual(expected);
  });
});

it('keeps GraphQL\'s own errors and hides every other fault', () => {
  expect(format(new GraphQLError('Cannot query field "nmae" on type "User". Did you mean "name"?', { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } })).toJSON()).toEqual({ message: 'Cannot query field "nmae" on type "User".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  expect(format(new GraphQLError('select * from users failed', { path: ['user'], originalError: new Error('select * from users failed') })).toJSON()).toEqual({ message: 'An unexpected error occurred.', path: ['user'], extensions: { code: 'INTERNAL' } });
  expect(format(new Error('connect ECONNREFUSED 10.0.0.1')).toJSON()).toEqual({ message: 'An unexpected error occurred.', extensions: { code: 'INTERNAL' } });
  // A subgraph's error as the gateway meets it: its code, without the subgraph's name.
  expect(format(new GraphQLError('Order not found.', { path: ['order'], extensions: { code: 'NOT_FOUND', serviceName: 'orders' } })).toJSON()).toEqual({ message: 'Order not found.', path: ['order'], extensions: { code: 'NOT_FOUND' } });
  expect(format(new ApiError('GATEWAY_TIMEOUT', 'The orders service did not answer in time.')).toJSON()).toEqual({ message: 'The orders service did not answer in time.', extensions: { code: 'GATEWAY_TIMEOUT' } });
});

it("raises a GraphQL-only code one way, typed by graphqlErrorCatalog's codes, with what goes beside it and where", () => {
  const refusal = graphQLRefusal('Query cost limit exceeded.', 'QUERY_COST_LIMIT_EXCEEDED', { extensions: { cost: { requested: 6_000, limit: 5_000 } } });
  expect(format(refusal).toJSON()).toEqual({ message: 'Query cost limit exceeded.', extensions: { code: 'QUERY_COST_LIMIT_EXCEEDED', cost: { requested: 6_000, limit: 5_000 } } });
  // @ts-expect-error the code is the second argument, not an extension beside it
  graphQLRefusal('x', 'GRAPHQL_PARSE_FAILED', { extensions: { code: 'OTHER' } });
  // @ts-expect-error a code of the REST format alone (a use case's) is no GraphQL refusal: graphQLErrorOf raises those
  expect(graphQLRefusal('Not enough stock.', 'OUT_OF_STOCK').extensions.code).toBe('OUT_OF_STOCK');
});
