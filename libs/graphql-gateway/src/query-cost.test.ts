import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildSchema, getNamedType, getNullableType, getOperationAST, type GraphQLSchema, isCompositeType, isListType, isObjectType, parse } from 'graphql';
import { costOf, LIST_LENGTHS, MAX_QUERY_COST, mutationFieldsOf } from './query-cost';

// The gateway's graph as composed: its lists, their arguments' defaults and their lengths price a query.
const supergraph = buildSchema(readFileSync(path.join(__dirname, '../../../apps/gateway/src/graphql/supergraph.graphql'), 'utf8'), { assumeValidSDL: true });

/** What `query` costs; without `variables`, as while validating (they are not known yet). */
const costIn = (schema: GraphQLSchema, query: string, variables?: Record<string, unknown>) => {
  const document = parse(query);
  const operation = getOperationAST(document);
  if (!operation) throw new Error('no operation');
  return costOf(schema, document, operation, variables).requested;
};
const cost = (query: string, variables?: Record<string, unknown>) => costIn(supergraph, query, variables);

it('charges 1 per scalar, 2 per object plus its fields, a list its selection times first', () => {
  expect(cost('{ me { id name } }')).toBe(2 + 2);
  expect(cost('{ orders(first: 10) { id user { name } } }')).toBe(2 + 10 * (1 + 2 + 1));
  expect(cost('query ($n: Int) { orders(first: $n) { id } }', { n: 50 })).toBe(2 + 50);
  expect(cost('query ($n: Int) { orders(first: $n) { id } }')).toBe(2 + 1); // unknown until the variables come
});

it("prices first as the list will run: the variable sent, else the variable's default, else the schema's default", () => {
  const byVariable = 'query ($n: Int = 100) { orders(first: $n) { id } }';
  expect(cost(byVariable, {})).toBe(2 + 100);
  expect(cost(byVariable, { n: 3 })).toBe(2 + 3);
  expect(cost('query ($n: Int) { orders(first: $n) { id } }', {})).toBe(2 + 20); // not sent: orders' own default
  expect(cost('{ orders { id } }')).toBe(2 + 20);
  expect(cost('{ orders { id } }', {})).toBe(2 + 20);
  // A length that cannot be read is the most the list returns, a page of 100.
  expect(cost('{ orders(first: null) { id } }')).toBe(2 + 100);
  expect(cost(byVariable, { n: null })).toBe(2 + 100);
});

it('counts the lines of an order 50 times, the most an order has', () => {
  expect(cost('{ order(id: "x") { id items { id quantity } } }')).toBe(2 + 1 + 2 + 50 * 2);
  expect(cost('{ orders(first: 2) { items { id product { name } } } }')).toBe(2 + 2 * (2 + 50 * (1 + 2 + 1)));
});

it("prices the tester's query written with a variable's default as its literal form, over the limit", () => {
  const selection = 'id amount user { name email } items { id productName product { name availableQuantity averageRating reviewCount price } } product { name availableQuantity } reviewCount';
  const aliased = (first: string) => `{ ${Array.from({ length: 15 }, (_, i) => `a${i}: orders(first: ${first}) { ${selection} }`).join(' ')} }`;
  const perOrder = 1 + 1 + (2 + 2) + (2 + 50 * (1 + 1 + (2 + 5))) + (2 + 2) + 1;
  const literal = cost(aliased('100'));
  expect(literal).toBe(15 * (2 + 100 * perOrder));
  expect(literal).toBeGreaterThan(MAX_QUERY_COST);
  expect(cost(`query ($n: Int = 100) ${aliased('$n')}`, {})).toBe(literal);
  // While validating, first from a variable counts 1: the client may send less than the default.
  expect(cost(`query ($n: Int = 100) ${aliased('$n')}`)).toBe(15 * (2 + 1 * perOrder));
});

it('states how long every list of the graph can be, and prices a list it does not know as a whole page', () => {
  const unstated: string[] = [];
  for (const type of Object.values(supergraph.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      const coordinate = `${type.name}.${field.name}`;
      if (isListType(getNullableType(field.type)) && isCompositeType(getNamedType(field.type)) && !LIST_LENGTHS[coordinate]) unstated.push(coordinate);
    }
  }
  expect(unstated).toEqual([]);
  const unknown = buildSchema('type Query { tags(first: Int): [Tag!]! } type Tag { name: String }');
  expect(costIn(unknown, '{ tags { name } }', {})).toBe(2 + 100);
  expect(costIn(unknown, '{ tags(first: 3) { name } }', {})).toBe(2 + 3);
});

it('counts fragments where they are spread, and __typename and introspection for free', () => {
  expect(cost('{ me { ...Who } } fragment Who on User { id name __typename }')).toBe(2 + 2);
  expect(cost('{ me { ... on User { id } } __typename }')).toBe(2 + 1);
});

it('charges each mutation field 10 more than its selection', () => {
  expect(cost('mutation { cancelOrder(id: "x") { id status } }')).toBe(10 + 2 + 2);
  expect(cost('mutation { a: cancelOrder(id: "x") { id } b: cancelOrder(id: "y") { id } __typename }')).toBe(2 * (10 + 2 + 1));
});

it('counts the writes of a mutation: every root field, aliases and fragments included', () => {
  const writes = (query: string) => {
    const document = parse(query);
    return mutationFieldsOf(document, getOperationAST(document) as NonNullable<ReturnType<typeof getOperationAST>>);
  };
  expect(writes('{ me { id } orders(first: 2) { id } }')).toBe(0);
  expect(writes(`mutation { ${Array.from({ length: 16 }, (_, i) => `o${i}: createOrder(input: {items: []}) { id }`).join(' ')} __typename }`)).toBe(16);
  expect(writes('mutation { ...Two ... on Mutation { c: cancelOrder(id: "z") { id } } } fragment Two on Mutation { a: cancelOrder(id: "x") { id } b: cancelOrder(id: "y") { id } }')).toBe(3);
  expect(cost('mutation { ...Two } fragment Two on Mutation { a: cancelOrder(id: "x") { id } b: cancelOrder(id: "y") { id } }')).toBe(2 * (10 + 2 + 1));
});
