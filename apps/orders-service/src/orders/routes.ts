// HTTP in and out for orders and everything under them.
import { Router } from 'express';
import { adminOnly, principalOf } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { expectedVersion } from '@platform/service-kit';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import type { CancellationService } from '../cancellations/service';
import { checkedIdempotencyKey } from '../idempotency/store';
import { toCancellationResponse } from '../cancellations/service';
import { etagOf, toOrderItemResponse, toOrderResponse, toShipmentResponse } from './representation';
import { cancellationBody, createOrderBody, getOrderQuery, listItemsQuery, listOrdersQuery, patchOrderBody, replaceOrderBody, searchOrdersBody, shipmentBody } from './schemas';
import type { OrderService } from './service';

export function ordersRoutes(orders: OrderService, cancellations: CancellationService): Router {
  const router = Router();

  router
    .route('/orders')
    .get(async (req, res) => {
      const query = parseQuery(listOrdersQuery, req.query);
      res.json(await orders.list(principalOf(res), query));
    })
    .post(async (req, res) => {
      const input = parseBody(createOrderBody, req.body);
      const { order, etag } = await orders.create(principalOf(res), input, checkedIdempotencyKey(req.header('idempotency-key'), 'Idempotency-Key'));
      res.status(201).location(`/v1/orders/${order.id}`).setHeader('ETag', etag).json(order);
    })
    .all(methodNotAllowed);

  router
    .route('/orders/search')
    .post(async (req, res) => {
      res.json(await orders.list(principalOf(res), parseBody(searchOrdersBody, req.body)));
    })
    .all(methodNotAllowed);

  router
    .route('/orders/:id')
    .get(async (req, res) => {
      const { include } = parseQuery(getOrderQuery, req.query);
      const order = await orders.get(principalOf(res), req.params.id as string);
      res.setHeader('ETag', etagOf(order)).json(toOrderResponse(order, { amountDetail: include?.includes('amountDetail') }));
    })
    .patch(async (req, res) => {
      const order = await orders.patch(principalOf(res), req.params.id as string, parseBody(patchOrderBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(order)).json(toOrderResponse(order));
    })
    .put(async (req, res) => {
      const order = await orders.replace(principalOf(res), req.params.id as string, parseBody(replaceOrderBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(order)).json(toOrderResponse(order));
    })
    .delete(async (req, res) => {
      await orders.delete(principalOf(res), req.params.id as string, expectedVersion(req));
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/orders/:id/items')
    .get(async (req, res) => {
      res.json(await orders.items(principalOf(res), req.params.id as string, parseQuery(listItemsQuery, req.query)));
    })
    .all(methodNotAllowed);

  router
    .route('/orders/:id/shipment')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      const order = await orders.get(principalOf(res), req.params.id as string);
      res.json(toShipmentResponse(order.id, order.shipment));
    })
    .put(adminOnly, async (req, res) => {
      const order = await orders.putShipment(principalOf(res), req.params.id as string, parseBody(shipmentBody, req.body));
      res.json(toShipmentResponse(order.id, order.shipment));
    })
    .all(methodNotAllowed);

  router
    .route('/orders/:id/cancellation')
    .post(async (req, res) => {
      const { reason } = parseBody(cancellationBody, req.body);
      const cancellation = await cancellations.request(principalOf(res), req.params.id as string, reason);
      // 202: accepted; the Location tells where to watch it complete.
      res.status(202).location(`/v1/orders/${cancellation.orderId}/cancellation`).json(toCancellationResponse(cancellation));
    })
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      res.json(toCancellationResponse(await cancellations.get(principalOf(res), req.params.id as string)));
    })
    .all(methodNotAllowed);

  router
    .route('/order-items/:id')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      res.json(toOrderItemResponse(await orders.item(principalOf(res), req.params.id as string)));
    })
    .all(methodNotAllowed);

  return router;
}
