// Parsing and validating a GraphQL document are pure: the same text always gives the same tree,
// and the same tree against the same schema and rules the same verdict. The gateway and the
// subgraphs see the same few documents over and over (client apps' operations, the gateway's
// planned fetches), so each handler does both once per text instead of once per request.
import { type DocumentNode, GraphQLError, type GraphQLSchema, Lexer, parse, type ParseOptions, Source, TokenKind, validate, type ValidationRule } from 'graphql';
import { graphQLRefusal } from './graphql-errors';

/** Enough for every operation of every client app; a flood of one-off documents cannot grow it further. */
const MAX_CACHED_DOCUMENTS = 1_000;

/**
 * Whether `text` has more than `maxTokens` tokens as graphql-js's parser counts them (each token
 * its lexer gives but the end; comments are none), read no further than the one past the limit.
 * graphql-js reports its own limit only as a syntax error told by its wording, so once a parse
 * with the limit has failed, this says whether the limit was why. A lexical error before there
 * (a character no token starts with) is no count: that error is the one reported, where it is.
 */
function exceedsTokenLimit(text: string, maxTokens: number): boolean {
  const lexer = new Lexer(new Source(text));
  try {
    for (let count = 0; count <= maxTokens; count++) if (lexer.advance().kind === TokenKind.EOF) return false;
    return true;
  } catch (error) {
    if (error instanceof GraphQLError) return false;
    throw error;
  }
}

/** graphql-js's parse error, coded: a syntax error is GRAPHQL_PARSE_FAILED, with its location. */
function parseFailure(error: unknown): unknown {
  if (!(error instanceof GraphQLError)) return error;
  return graphQLRefusal(error.message, 'GRAPHQL_PARSE_FAILED', { source: error.source, positions: error.positions });
}

export interface DocumentCache {
  /** graphql-js `parse`, once per text; `maxTokens` and `maxSourceLength` from the cache's options apply to every text. */
  parse(source: string | Source, options?: ParseOptions): DocumentNode;
  /** graphql-js `validate`, once per parsed document and rule list (keep each rule list one array). */
  validate(schema: GraphQLSchema, document: DocumentNode, rules?: readonly ValidationRule[]): readonly GraphQLError[];
}

export function documentCache(options: ParseOptions = {}): DocumentCache {
  const documents = new Map<string, DocumentNode>();
  const verdicts = new WeakMap<GraphQLSchema, WeakMap<readonly ValidationRule[], WeakMap<DocumentNode, readonly GraphQLError[]>>>();
  return {
    parse(source, parseOptions) {
      const text = typeof source === 'string' ? source : source.body;
      let document = documents.get(text);
      if (!document) {
        // Syntax errors and the limits throw here, every time: only good documents are kept.
        const { maxSourceLength, ...parserOptions } = { ...parseOptions, ...options };
        // The length first, by us, before a character is read: comments and the lines of a block
        // string are no tokens, so only the length bounds what reading them costs.
        if (maxSourceLength !== undefined && text.length > maxSourceLength) {
          throw graphQLRefusal(`Document length limit exceeded: the document is ${text.length} characters and the limit is ${maxSourceLength}.`, 'QUERY_LENGTH_LIMIT_EXCEEDED', { extensions: { length: { requested: text.length, limit: maxSourceLength } } });
        }
        // One pass for a good document: the parser stops at its own token limit. Only a failed
        // parse is read a second time, to tell the limit from a syntax error (never by wording).
        try {
          document = parse(text, parserOptions);
        } catch (error) {
          const maxTokens = parserOptions.maxLexicalTokens ?? parserOptions.maxTokens;
          if (error instanceof GraphQLError && maxTokens !== undefined && exceedsTokenLimit(text, maxTokens)) {
            // Parsing stopped at the limit: the answer has the limit, no count.
            throw graphQLRefusal(`Token limit exceeded: the document has more than ${maxTokens} tokens, the most that is parsed.`, 'QUERY_TOKEN_LIMIT_EXCEEDED', { extensions: { tokens: { limit: maxTokens } } });
          }
          throw parseFailure(error);
        }
        if (documents.size >= MAX_CACHED_DOCUMENTS) documents.delete(documents.keys().next().value as string);
        documents.set(text, document);
      }
      return document;
    },
    validate(schema, document, rules) {
      const list = rules ?? [];
      let bySchema = verdicts.get(schema);
      if (!bySchema) verdicts.set(schema, (bySchema = new WeakMap()));
      let byRules = bySchema.get(list);
      if (!byRules) bySchema.set(list, (byRules = new WeakMap()));
      let errors = byRules.get(document);
      if (!errors) {
        errors = validate(schema, document, rules);
        byRules.set(document, errors);
      }
      return errors;
    },
  };
}
