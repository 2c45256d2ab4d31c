// Parsing and validating a GraphQL document are pure: the same text always gives the same tree,
// and the same tree against the same schema and rules the same verdict. The gateway and the
// subgraphs see the same few documents over and over (client apps' operations, the gateway's
// planned fetches), so each handler does both once per text instead of once per request.
import { type DocumentNode, GraphQLError, type GraphQLSchema, parse, type ParseOptions, type Source, validate, type ValidationRule } from 'graphql';
import { graphQLRefusal } from './graphql-errors';

/** Enough for every operation of every client app; a flood of one-off documents cannot grow it further. */
const MAX_CACHED_DOCUMENTS = 1_000;

/**
 * graphql-js's parse error, coded: the token limit, which graphql-js reports as a syntax error
 * ("Document contains more that N tokens. Parsing aborted.", sic), is QUERY_TOKEN_LIMIT_EXCEEDED
 * with `tokens: {limit}` (parsing stops there: no count); any other syntax error is
 * GRAPHQL_PARSE_FAILED, with its location.
 */
function parseFailure(error: unknown, maxTokens: number | undefined): unknown {
  if (!(error instanceof GraphQLError)) return error;
  if (maxTokens !== undefined && error.message.endsWith(` ${maxTokens} tokens. Parsing aborted.`)) {
    return graphQLRefusal(`Token limit exceeded: the document has more than ${maxTokens} tokens, the most that is parsed.`, 'QUERY_TOKEN_LIMIT_EXCEEDED', { extensions: { tokens: { limit: maxTokens } } });
  }
  return graphQLRefusal(error.message, 'GRAPHQL_PARSE_FAILED', { source: error.source, positions: error.positions });
}

export interface DocumentCache {
  /** graphql-js `parse`, once per text; `maxTokens` from the cache's options applies to every text. */
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
        // Syntax errors and the token limit throw here, every time: only good documents are kept.
        try {
          document = parse(text, { ...parseOptions, ...options });
        } catch (error) {
          throw parseFailure(error, options.maxTokens);
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
