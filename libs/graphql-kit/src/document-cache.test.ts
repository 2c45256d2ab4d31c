import { GraphQLError } from 'graphql';
import { documentCache } from './document-cache';

// graphql-js's parse errors, said otherwise than today ("Document contains more that 5 tokens.
// Parsing aborted.", "Syntax Error: …"): the code and extensions a client gets must not change
// with the library's wording, so the token limit must be told from something other than the text.
jest.mock('graphql', () => {
  const actual = jest.requireActual<typeof import('graphql')>('graphql');
  return {
    ...actual,
    parse: (...args: Parameters<typeof actual.parse>) => {
      try {
        return actual.parse(...args);
      } catch (error) {
        if (!(error instanceof actual.GraphQLError)) throw error;
        throw new actual.GraphQLError(`Reworded: ${error.message.replace(/ tokens\. Parsing aborted\.$/, ' tokens; stopped.')}`, { source: error.source, positions: error.positions });
      }
    },
  };
});

const LIMIT = 5;
const refusalOf = (text: string) => {
  try {
    documentCache({ maxTokens: LIMIT }).parse(text);
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    return { message: error.message, extensions: error.extensions, locations: error.locations };
  }
  return undefined;
};

it('refuses a document of more tokens than the limit with QUERY_TOKEN_LIMIT_EXCEEDED and the limit, whatever graphql-js says in its message', () => {
  // `{ a b c }` is five tokens (braces included; comments are not tokens, as graphql-js counts).
  expect(refusalOf('{ a b c } # a comment is no token')).toBeUndefined();
  expect(refusalOf('{ a b c d }')).toEqual({
    message: `Token limit exceeded: the document has more than ${LIMIT} tokens, the most that is parsed.`,
    extensions: { code: 'QUERY_TOKEN_LIMIT_EXCEEDED', tokens: { limit: LIMIT } },
    locations: undefined,
  });
  expect(refusalOf(`{ ${'a '.repeat(2_000)}}`)?.extensions).toEqual({ code: 'QUERY_TOKEN_LIMIT_EXCEEDED', tokens: { limit: LIMIT } });
});

it('gives any other syntax error as GRAPHQL_PARSE_FAILED where it is: a bad token within the limit, or a character no token starts with', () => {
  expect(refusalOf('{ a } }')).toMatchObject({ extensions: { code: 'GRAPHQL_PARSE_FAILED' }, locations: [{ line: 1, column: 7 }] });
  expect(refusalOf('{ a ~ b c d e f }')).toMatchObject({ extensions: { code: 'GRAPHQL_PARSE_FAILED' }, locations: [{ line: 1, column: 5 }] });
  expect(refusalOf('{ a b')).toMatchObject({ extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
});
