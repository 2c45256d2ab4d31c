// A DateTime a client sends that is no instant is its mistake, coded as every other value that
// does not fit (GRAPHQL_VALIDATION_FAILED, never Apollo's BAD_USER_INPUT); one a service answers
// is the service's fault (INTERNAL).
import { buildSchema, graphql } from 'graphql';
import { DateTime } from './date-time';
import { formatGraphQLError } from './graphql-errors';

const schema = buildSchema('scalar DateTime type Query { echo(at: DateTime!): DateTime broken: DateTime }');
Object.assign(schema.getType('DateTime') as object, { serialize: DateTime.serialize, parseValue: DateTime.parseValue, parseLiteral: DateTime.parseLiteral });
const rootValue = { echo: ({ at }: { at: Date }) => at, broken: () => 'yesterday' };
const format = formatGraphQLError({ hideSuggestions: true });
const codes = async (source: string, variableValues?: Record<string, unknown>) => ((await graphql({ schema, source, rootValue, variableValues })).errors ?? []).map((error) => format(error).extensions.code);

it('answers an instant as it was sent', async () => {
  expect((await graphql({ schema, source: '{ echo(at: "2026-11-22T09:30:00.000Z") }', rootValue })).data).toEqual({ echo: '2026-11-22T09:30:00.000Z' });
});

it('codes a literal or variable that is no instant GRAPHQL_VALIDATION_FAILED, and an answer that is none INTERNAL', async () => {
  expect(await codes('{ echo(at: "tomorrow") }')).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  expect(await codes('query ($at: DateTime!) { echo(at: $at) }', { at: 'tomorrow' })).toEqual(['GRAPHQL_VALIDATION_FAILED']);
  expect(await codes('{ broken }')).toEqual(['INTERNAL']);
});
