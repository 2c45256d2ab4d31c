// The elements an operation selects, as the deprecation registry names them.
import { buildSchema, parse } from 'graphql';
import { selectedElements } from './selected-elements';

const schema = buildSchema(`
  enum OrderStatus { PENDING CANCELED }
  interface Node { id: ID! }
  type Shipment { carrier: String trackingNumber: String }
  type Order implements Node { id: ID! status: OrderStatus! shipment: Shipment items(first: Int, after: String): [String!]! }
  type Query { order(id: ID!): Order orders(status: OrderStatus, first: Int): [Order!]! node(id: ID!): Node }
  type Mutation { cancelOrder(id: ID!, reason: String): Order }
`);

describe('selectedElements', () => {
  it('names fields through fragments, inline fragments and nested spreads, and the arguments given', () => {
    const document = parse(`
      query Track($id: ID!) { order(id: $id) { ...OrderParts } node(id: $id) { id ... on Order { shipment { carrier } } } }
      fragment OrderParts on Order { id ...ShipmentParts items(first: 2) }
      fragment ShipmentParts on Order { shipment { trackingNumber } }
      fragment Unused on Order { status }
    `);
    expect(selectedElements(schema, document)).toEqual([
      'graphql:Node.id',
      'graphql:Order.id',
      'graphql:Order.items',
      'graphql:Order.items.first',
      'graphql:Order.shipment',
      'graphql:Query.node',
      'graphql:Query.node.id',
      'graphql:Query.order',
      'graphql:Query.order.id',
      'graphql:Shipment.carrier',
      'graphql:Shipment.trackingNumber',
    ]);
  });

  it('takes the operation named, names enum values written in the document, and leaves out __typename', () => {
    const document = parse('query A { orders(status: CANCELED) { __typename id } } mutation B { cancelOrder(id: "1") { status } }');
    expect(selectedElements(schema, document, 'A')).toEqual(['graphql:Order.id', 'graphql:OrderStatus.CANCELED', 'graphql:Query.orders', 'graphql:Query.orders.status']);
    expect(selectedElements(schema, document, 'B')).toEqual(['graphql:Mutation.cancelOrder', 'graphql:Mutation.cancelOrder.id', 'graphql:Order.status']);
    expect(selectedElements(schema, document, 'C')).toEqual([]);
  });

  it('computes once per document and operation: the same answer is returned again', () => {
    const document = parse('{ order(id: "1") { id } }');
    const first = selectedElements(schema, document);
    expect(selectedElements(schema, document)).toBe(first);
    expect(selectedElements(schema, parse('{ order(id: "1") { id } }'))).not.toBe(first);
  });
});
