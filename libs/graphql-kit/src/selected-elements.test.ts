import { buildSchema, parse } from 'graphql';
import { selectedElements } from './selected-elements';

const schema = buildSchema(`
  type Query { order(id: ID!): Order, orders(first: Int, after: String): [Order!]!, node(id: ID!): Node }
  interface Node { id: ID! }
  type Order implements Node { id: ID!, total: Int!, shipment: Shipment, items(first: Int): [Item!]! }
  type Shipment { trackingNumber: String, carrier: String }
  type Item { quantity: Int! }
`);

describe('selectedElements', () => {
  it('names each field through fragments and inline fragments, on the type it is selected on, and each argument given', () => {
    const document = parse(`
      query Mine($id: ID!) { order(id: $id) { ...OrderCard shipment { ... on Shipment { trackingNumber } } } node(id: $id) { id ... on Order { total } } __typename }
      fragment OrderCard on Order { id items(first: 2) { ...Line } }
      fragment Line on Item { quantity }
      fragment Unused on Shipment { carrier }
      query Other { orders { id } }
    `);
    expect(selectedElements(schema, document, 'Mine')).toEqual([
      'graphql:Item.quantity',
      'graphql:Node.id',
      'graphql:Order.id',
      'graphql:Order.items',
      'graphql:Order.items.first',
      'graphql:Order.shipment',
      'graphql:Order.total',
      'graphql:Query.node',
      'graphql:Query.node.id',
      'graphql:Query.order',
      'graphql:Query.order.id',
      'graphql:Shipment.trackingNumber',
    ]);
    expect(selectedElements(schema, document, 'Other')).toEqual(['graphql:Order.id', 'graphql:Query.orders']);
  });

  it('computes once per document and operation, and answers [] for an operation the document does not have', () => {
    const document = parse('{ orders(first: 1) { id } }');
    const first = selectedElements(schema, document);
    expect(selectedElements(schema, document)).toBe(first);
    expect(first).toEqual(['graphql:Order.id', 'graphql:Query.orders', 'graphql:Query.orders.first']);
    expect(selectedElements(schema, document, 'Missing')).toEqual([]);
  });
});
