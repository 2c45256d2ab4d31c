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

const lengthRefusalOf = (text: string, maxSourceLength: number) => {
  try {
    documentCache({ maxTokens: 50, maxSourceLength }).parse(text);
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    return { message: error.message, extensions: error.extensions };
  }
  return undefined;
};

it('refuses a document longer than maxSourceLength with QUERY_LENGTH_LIMIT_EXCEEDED, its length and the limit, however few its tokens', () => {
  // Comments and a block string's lines are no tokens: the token limit does not stop them, the length does.
  const comments = `{ a }\n${'# c\n'.repeat(100)}`;
  expect(lengthRefusalOf(comments, 400)).toEqual({
    message: `Document length limit exceeded: the document is ${comments.length} characters and the limit is 400.`,
    extensions: { code: 'QUERY_LENGTH_LIMIT_EXCEEDED', length: { requested: comments.length, limit: 400 } },
  });
  const blockString = `{ a(b: """${'x\n'.repeat(200)}""") }`;
  expect(lengthRefusalOf(blockString, 400)?.extensions).toEqual({ code: 'QUERY_LENGTH_LIMIT_EXCEEDED', length: { requested: blockString.length, limit: 400 } });
  // Refused before it is read: a syntax error past the limit is not what is reported.
  expect(lengthRefusalOf(`${comments}~`, 400)?.extensions).toMatchObject({ code: 'QUERY_LENGTH_LIMIT_EXCEEDED' });
  // At the limit, it parses.
  expect(lengthRefusalOf(comments, comments.length)).toBeUndefined();
  expect(lengthRefusalOf(blockString, blockString.length)).toBeUndefined();
});
