// HTTP in and out for an order's cancellation: each endpoint declared once, its handler beside it.
import { defineEndpoints, publicPath } from '@platform/endpoints';
import { cancellationBody, orderInPath } from '../orders/schemas';
import { cancellationRepresentation, toCancellationResponse } from './representation';
import type { CancellationService } from './service';

export const cancellationEndpoints = defineEndpoints('orders', {
  getCancellation: {
    method: 'GET', path: '/orders/:id/cancellation', summary: 'Read the cancellation record', access: 'signed-in', scope: 'orders',
    params: { id: orderInPath },
    responses: { 200: { description: 'The cancellation', body: cancellationRepresentation } },
  },
  cancelOrder: {
    method: 'POST', path: '/orders/:id/cancellation', summary: 'Request cancellation; completes asynchronously', access: 'signed-in', scope: 'orders',
    params: { id: orderInPath },
    body: cancellationBody, ifMatch: true, conflicts: ['ORDER_ALREADY_CANCELED', 'ORDER_NOT_CANCELABLE', 'CONFLICT'],
    responses: { 202: { description: 'The cancellation, REQUESTED (or the one already requested)', body: cancellationRepresentation, headers: ['Location'] } },
  },
});

export function cancellationRoutes(cancellations: CancellationService) {
  return cancellationEndpoints.routes({
    getCancellation: async ({ principal, params, res }) => {
      res.json(toCancellationResponse(await cancellations.get(principal, params.id)));
    },
    cancelOrder: async ({ principal, params, body, expectedVersion, res }) => {
      const cancellation = await cancellations.request(principal, params.id, body.reason, expectedVersion);
      // 202: accepted; the Location tells where to watch it complete.
      res.status(202).location(publicPath('orders', cancellation.orderId, 'cancellation')).json(toCancellationResponse(cancellation));
    },
  });
}
