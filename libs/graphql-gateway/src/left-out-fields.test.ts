// Fields left out of an answer: null with an error at each place, null going up past non-null fields.
import { buildSchema, getOperationAST, GraphQLError, parse } from 'graphql';
import { leaveOutFields } from './left-out-fields';
import { selectedOutputFields } from './selected-elements';

const schema = buildSchema(`
  type Shipment { carrier: String trackingNumber: String code: String! }
  type Order { id: ID! currency: String! shipment: Shipment items: [Item!]! }
  type Item { id: ID! sku: String! name: String }
  type Query { order(id: ID!): Order orders: [Order!]! }
`);
const gone = (element: string) => new Map([[element, { message: `${element} is gone`, code: 'GONE' }]]);

function answer(query: string, data: Record<string, unknown>, element: string, errors?: GraphQLError[]) {
  const document = parse(query);
  const operation = getOperationAST(document);
  if (!operation) throw new Error('no operation');
  const result = leaveOutFields(schema, document, operation, { data, errors }, gone(element));
  return JSON.parse(JSON.stringify(result)) as { data: unknown; errors?: unknown[] };
}

describe('leaveOutFields', () => {
  it('nulls a nullable field at every place it is selected, aliases, lists and fragments included, with one error each', () => {
    const query = '{ orders { id ...S } } fragment S on Order { shipment { status: carrier ... on Shipment { tracking: trackingNumber } } }';
    const data = { orders: [{ id: 'o1', shipment: { status: 'DHL', tracking: 'T1' } }, { id: 'o2', shipment: null }] };
    expect(answer(query, data, 'graphql:Shipment.trackingNumber')).toEqual({
      data: { orders: [{ id: 'o1', shipment: { status: 'DHL', tracking: null } }, { id: 'o2', shipment: null }] },
      errors: [{ message: 'graphql:Shipment.trackingNumber is gone', path: ['orders', 0, 'shipment', 'tracking'], extensions: { code: 'GONE' } }],
    });
  });

  it('takes a non-null field up to the nearest nullable place: the shipment, the order, or the whole data', () => {
    expect(answer('{ order(id: "o1") { id shipment { carrier code } } }', { order: { id: 'o1', shipment: { carrier: 'DHL', code: 'X' } } }, 'graphql:Shipment.code').data).toEqual({ order: { id: 'o1', shipment: null } });
    expect(answer('{ order(id: "o1") { id currency } }', { order: { id: 'o1', currency: 'KRW' } }, 'graphql:Order.currency').data).toEqual({ order: null });
    // orders: [Order!]! — an item cannot be null, nor the list: nothing is left but data: null.
    const all = answer('{ orders { id items { sku } } }', { orders: [{ id: 'o1', items: [{ sku: 'A' }] }] }, 'graphql:Item.sku');
    expect(all).toEqual({ data: null, errors: [{ message: 'graphql:Item.sku is gone', path: ['orders', 0, 'items', 0, 'sku'], extensions: { code: 'GONE' } }] });
  });

  it('leaves an answer without the field as it was, and drops errors of the value it leaves out', () => {
    const data = { order: { id: 'o1' } };
    const result = { data };
    const document = parse('{ order(id: "o1") { id } }');
    expect(leaveOutFields(schema, document, getOperationAST(document)!, result, gone('graphql:Shipment.carrier'))).toBe(result);
    const failed = new GraphQLError('carrier lookup failed', { path: ['order', 'shipment', 'carrier'] });
    const answered = answer('{ order(id: "o1") { shipment { carrier } } }', { order: { shipment: { carrier: null } } }, 'graphql:Shipment.carrier', [failed]);
    expect(answered.errors).toEqual([{ message: 'graphql:Shipment.carrier is gone', path: ['order', 'shipment', 'carrier'], extensions: { code: 'GONE' } }]);
  });

  it('tells output fields from the arguments and enum values an operation writes', () => {
    expect([...selectedOutputFields(schema, parse('{ order(id: "o1") { id } }'))].sort()).toEqual(['graphql:Order.id', 'graphql:Query.order']);
  });
});
