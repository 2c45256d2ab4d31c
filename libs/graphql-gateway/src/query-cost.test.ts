import { getOperationAST, parse } from 'graphql';
import { costOf, mutationFieldsOf } from './query-cost';

const cost = (query: string, variables?: Record<string, unknown>) => {
  const document = parse(query);
  const operation = getOperationAST(document);
  if (!operation) throw new Error('no operation');
  return costOf(document, operation, variables).requested;
};

it('charges 1 per scalar, 2 per object plus its fields, a list its selection times first', () => {
  expect(cost('{ me { id name } }')).toBe(2 + 2);
  expect(cost('{ orders(first: 10) { id user { name } } }')).toBe(2 + 10 * (1 + 2 + 1));
  expect(cost('query ($n: Int) { orders(first: $n) { id } }', { n: 50 })).toBe(2 + 50);
  expect(cost('query ($n: Int) { orders(first: $n) { id } }')).toBe(2 + 1); // unknown until the variables come
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
