// DateTime: an instant in UTC, ISO 8601 with milliseconds, the way the REST API writes times.
import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

function toInstant(value: unknown): Date {
  if (typeof value === 'string' && ISO_UTC.test(value) && !Number.isNaN(Date.parse(value))) return new Date(value);
  throw new GraphQLError('A DateTime is an ISO 8601 instant in UTC, e.g. 2026-11-22T09:30:00.000Z.', { extensions: { code: 'BAD_USER_INPUT' } });
}

export const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  description: 'An instant in UTC, written in ISO 8601 with milliseconds: 2026-11-22T09:30:00.000Z.',
  serialize: (value) => (value instanceof Date ? value : toInstant(value)).toISOString(),
  parseValue: (value) => toInstant(value),
  parseLiteral: (node) => toInstant(node.kind === Kind.STRING ? node.value : undefined),
});
