// HTTP in and out for orders and their items (shipments and cancellations have routes of their own).
import { type Response, Router } from 'express';
import { principalOf } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { type ListEnvelope, mapListItems, pageHeaders } from '@platform/paging';
import { expectedVersion } from '@platform/service-kit';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import type { IdempotentUseCase } from '../idempotency/idempotent';
import { checkedIdempotencyKey } from '../idempotency/store';
import type { ChangeOrder } from './change-order';
import type { OrderQueries } from './queries';
import type { OrderRow } from './repository';
import { etagOf, toOrderItemResponse, toOrderResponse, toPlacedOrderResponse } from './representation';
import { type CreateOrderInput, createOrderBody, getOrderQuery, listItemsQuery, listOrdersQuery, patchOrderBody, replaceOrderBody, searchOrdersBody } from './schemas';

/** A page of orders; an estimated `totalCount` is flagged by a header (docs/api.md, "Totals"). */
function sendOrderPage(res: Response, page: ListEnvelope<OrderRow>): void {
  res.set(pageHeaders(page)).json(mapListItems(page, toOrderResponse));
}

export function ordersRoutes(queries: OrderQueries, placeOrder: IdempotentUseCase<CreateOrderInput, OrderRow>, changeOrder: ChangeOrder): Router {
  const router = Router();

  router
    .route('/orders')
    .get(async (req, res) => {
      const query = parseQuery(listOrdersQuery, req.query);
      sendOrderPage(res, await queries.list(principalOf(res), query));
    })
    .post(async (req, res) => {
      const input = parseBody(createOrderBody, req.body);
      const placed = await placeOrder(principalOf(res), input, checkedIdempotencyKey(req.header('idempotency-key'), 'Idempotency-Key'));
      const { body, etag } = toPlacedOrderResponse(placed);
      res.status(201).location(`/v1/orders/${body.id}`).setHeader('ETag', etag).json(body);
    })
    .all(methodNotAllowed);

  router
    .route('/orders/search')
    .post(async (req, res) => {
      sendOrderPage(res, await queries.list(principalOf(res), parseBody(searchOrdersBody, req.body)));
    })
    .all(methodNotAllowed);

  router
    .route('/orders/:id')
    .get(async (req, res) => {
      const { include } = parseQuery(getOrderQuery, req.query);
      const order = await queries.get(principalOf(res), req.params.id as string);
      res.setHeader('ETag', etagOf(order)).json(toOrderResponse(order, { amountDetail: include?.includes('amountDetail') }));
    })
    .patch(async (req, res) => {
      const order = await changeOrder.patch(principalOf(res), req.params.id as string, parseBody(patchOrderBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(order)).json(toOrderResponse(order));
    })
    .put(async (req, res) => {
      const order = await changeOrder.replace(principalOf(res), req.params.id as string, parseBody(replaceOrderBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(order)).json(toOrderResponse(order));
    })
    .delete(async (req, res) => {
      await changeOrder.delete(principalOf(res), req.params.id as string, expectedVersion(req));
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/orders/:id/items')
    .get(async (req, res) => {
      res.json(mapListItems(await queries.items(principalOf(res), req.params.id as string, parseQuery(listItemsQuery, req.query)), toOrderItemResponse));
    })
    .all(methodNotAllowed);

  router
    .route('/order-items/:id')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      res.json(toOrderItemResponse(await queries.item(principalOf(res), req.params.id as string)));
    })
    .all(methodNotAllowed);

  return router;
}
