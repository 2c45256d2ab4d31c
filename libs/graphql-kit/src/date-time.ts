// DateTime: an instant in UTC, ISO 8601 with milliseconds, the way the REST API writes times.
import { GraphQLScalarType, Kind } from 'graphql';
import { graphQLRefusal } from './graphql-errors';

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;

function isInstant(value: unknown): value is string {
  return typeof value === 'string' && ISO_UTC.test(value) && !Number.isNaN(Date.parse(value));
}

/** A client's value that is no instant is a variable or argument that does not fit: GRAPHQL_VALIDATION_FAILED, as any other (never Apollo's BAD_USER_INPUT). */
function toInstant(value: unknown): Date {
  if (isInstant(value)) return new Date(value);
  throw graphQLRefusal('A DateTime is an ISO 8601 instant in UTC, e.g. 2026-11-22T09:30:00.000Z.', 'GRAPHQL_VALIDATION_FAILED');
}

/** An answer's value that is no instant is the service's fault: a plain Error, so the client sees INTERNAL. */
function serialize(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (isInstant(value)) return new Date(value).toISOString();
  throw new TypeError(`DateTime cannot represent ${typeof value === 'string' ? 'this string' : typeof value} as an instant`);
}

export const DateTime = new GraphQLScalarType({
  name: 'DateTime',
  description: 'An instant in UTC, written in ISO 8601 with milliseconds: 2026-11-22T09:30:00.000Z.',
  serialize,
  parseValue: (value) => toInstant(value),
  parseLiteral: (node) => toInstant(node.kind === Kind.STRING ? node.value : undefined),
});
