import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { MAX_ALIASES, MAX_DEPTH, MAX_DIRECTIVES, NameLengthLimit, shapeLimitRules } from './document-limits';

// graphql-armor's refusals, said otherwise than today ("… exceeded, found 13."): our extensions
// must not change with a library's wording, so the count must come from somewhere else.
jest.mock('graphql', () => {
  const actual = jest.requireActual<typeof import('graphql')>('graphql');
  class RewordedError extends actual.GraphQLError {
    constructor(message: string, options?: ConstructorParameters<typeof actual.GraphQLError>[1]) {
      super(message.replace(/ exceeded, found (\d+)\.$/, ' exceeded ($1 found).'), options);
    }
  }
  return { ...actual, GraphQLError: RewordedError };
});

const schema = buildSchema('type Query { me: User } type User { id: ID name: String friend: User }');
const extensionsOf = (query: string) => validate(schema, parse(query), [NameLengthLimit, ...specifiedRules, ...shapeLimitRules()]).map((error) => [error.message, error.extensions]);

it('refuses each limit with its own code and the count beside the limit, whatever graphql-armor says in its message', () => {
  const nested = (levels: number) => `{ me { ${'friend { '.repeat(levels - 2)}id${' }'.repeat(levels - 2)} } }`;
  expect(extensionsOf(nested(MAX_DEPTH))).toEqual([]);
  expect(extensionsOf(nested(MAX_DEPTH + 3))).toEqual([[`Query depth limit exceeded: this operation nests 13 levels deep and the limit is ${MAX_DEPTH}.`, { code: 'QUERY_DEPTH_LIMIT_EXCEEDED', depth: { requested: 13, limit: MAX_DEPTH } }]]);
  const aliased = (count: number) => `{ ${Array.from({ length: count }, (_, i) => `a${i}: me { id }`).join(' ')} }`;
  expect(extensionsOf(aliased(MAX_ALIASES))).toEqual([]);
  expect(extensionsOf(aliased(MAX_ALIASES + 2))).toEqual([[`Query alias limit exceeded: this operation has 17 aliases and the limit is ${MAX_ALIASES}.`, { code: 'QUERY_ALIAS_LIMIT_EXCEEDED', aliases: { requested: 17, limit: MAX_ALIASES } }]]);
  const directed = (count: number) => `{ me { ${'id @include(if: true) '.repeat(count)}} }`;
  expect(extensionsOf(directed(MAX_DIRECTIVES))).toEqual([]);
  expect(extensionsOf(directed(MAX_DIRECTIVES + 1))).toEqual([[`Query directive limit exceeded: this operation has 21 directives and the limit is ${MAX_DIRECTIVES}.`, { code: 'QUERY_DIRECTIVE_LIMIT_EXCEEDED', directives: { requested: 21, limit: MAX_DIRECTIVES } }]]);
});

it("counts as graphql-armor counts: a fragment is a level, a fragment spread's aliases count once per spread, __typename aliases are free", () => {
  // Two levels of inline fragments under me's selection: depth 2 + 10.
  expect(extensionsOf(`{ me { ${'... { '.repeat(10)}id${' }'.repeat(10)} } }`)[0][1]).toEqual({ code: 'QUERY_DEPTH_LIMIT_EXCEEDED', depth: { requested: 12, limit: MAX_DEPTH } });
  const fragment = `fragment F on User { ${Array.from({ length: 8 }, (_, i) => `f${i}: id`).join(' ')} }`;
  expect(extensionsOf(`{ a: me { ...F } b: me { ...F } } ${fragment}`)[0][1]).toEqual({ code: 'QUERY_ALIAS_LIMIT_EXCEEDED', aliases: { requested: 2 + 8 + 8, limit: MAX_ALIASES } });
  expect(extensionsOf(`{ me { ${Array.from({ length: 20 }, (_, i) => `t${i}: __typename`).join(' ')} } }`)).toEqual([]);
});

it('refuses each operation of a document over a limit on its own, with its own count', () => {
  const aliased = (name: string, count: number) => `query ${name} { ${Array.from({ length: count }, (_, i) => `a${i}: me { id }`).join(' ')} }`;
  expect(extensionsOf(`${aliased('A', 16)} ${aliased('B', 3)} ${aliased('C', 18)}`).map(([, extensions]) => extensions)).toEqual([
    { code: 'QUERY_ALIAS_LIMIT_EXCEEDED', aliases: { requested: 16, limit: MAX_ALIASES } },
    { code: 'QUERY_ALIAS_LIMIT_EXCEEDED', aliases: { requested: 18, limit: MAX_ALIASES } },
  ]);
});
