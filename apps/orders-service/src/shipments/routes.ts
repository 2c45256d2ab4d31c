// HTTP in and out for an order's shipment: each endpoint declared once, its handler beside it.
import { defineEndpoints } from '@platform/endpoints';
import type { OrderQueries } from '../orders/queries';
import { etagOf, shipmentRepresentation, toShipmentResponse } from '../orders/representation';
import { orderInPath, shipmentBody } from '../orders/schemas';
import type { ShipmentService } from './service';

export const shipmentEndpoints = defineEndpoints('orders', {
  getShipment: {
    method: 'GET', path: '/orders/:id/shipment', summary: "Read an order's shipment", access: 'signed-in', scope: 'orders',
    params: { id: orderInPath },
    responses: { 200: { description: 'The shipment', body: shipmentRepresentation, headers: ['ETag'] } },
  },
  putShipment: {
    method: 'PUT', path: '/orders/:id/shipment', summary: 'Create or replace the shipment (admin)', access: 'admin', scope: 'orders',
    params: { id: orderInPath },
    body: shipmentBody, ifMatch: true, conflicts: ['CONFLICT'],
    responses: { 200: { description: 'The shipment', body: shipmentRepresentation, headers: ['ETag'] } },
  },
});

export function shipmentRoutes(queries: OrderQueries, shipments: ShipmentService) {
  return shipmentEndpoints.routes({
    // The shipment's ETag is its order's version, which every change of the shipment moves.
    getShipment: async ({ principal, params, res }) => {
      const order = await queries.get(principal, params.id);
      res.setHeader('ETag', etagOf(order)).json(toShipmentResponse(order.id, order.shipment));
    },
    putShipment: async ({ principal, params, body, expectedVersion, res }) => {
      const order = await shipments.put(principal, params.id, body, expectedVersion);
      res.setHeader('ETag', etagOf(order)).json(toShipmentResponse(order.id, order.shipment));
    },
  });
}
