// HTTP in and out for orders and their items (shipments and cancellations have routes of their
// own): each endpoint declared once, its handler beside it.
import type { Response } from 'express';
import { defineEndpoints, publicPath } from '@platform/endpoints';
import { type ListEnvelope, mapListItems, pageHeaders } from '@platform/paging';
import { resourceId } from '@platform/validation';
import type { IdempotentUseCase } from '../idempotency/idempotent';
import { checkedIdempotencyKey } from '../idempotency/store';
import type { ChangeOrder } from './change-order';
import type { OrderQueries } from './queries';
import type { OrderRow } from './repository';
import { etagOf, orderItemPageRepresentation, orderItemRepresentation, orderPageRepresentation, orderRepresentation, toOrderItemResponse, toOrderResponse, toPlacedOrderResponse } from './representation';
import { type CreateOrderInput, createOrderBody, getOrderQuery, listItemsQuery, listOrdersQuery, orderInPath, orderSortFields, patchOrderBody, replaceOrderBody, searchOrdersBody } from './schemas';

/** A page of orders; an estimated `totalCount` is flagged by a header (docs/api.md, "Totals"). */
function sendOrderPage(res: Response, page: ListEnvelope<OrderRow>): void {
  res.set(pageHeaders(page)).json(mapListItems(page, toOrderResponse));
}

export const orderEndpoints = defineEndpoints('orders', {
  listOrders: {
    method: 'GET', path: '/orders', summary: "List orders (a customer's own; all for admins)", access: 'signed-in', scope: 'orders',
    query: listOrdersQuery, sortFields: orderSortFields, forbidden: true,
    responses: { 200: { description: 'A page of orders', body: orderPageRepresentation } },
  },
  createOrder: {
    method: 'POST', path: '/orders', summary: 'Place an order (priced by the server; honours Idempotency-Key)', access: 'signed-in', scope: 'orders',
    body: createOrderBody, idempotencyKey: true, conflicts: ['OUT_OF_STOCK', 'CONFLICT'],
    responses: { 201: { description: 'The order (or, for a repeated Idempotency-Key, the first response again)', body: orderRepresentation, headers: ['Location', 'ETag'] } },
  },
  searchOrders: {
    method: 'POST', path: '/orders/search', summary: 'List orders with conditions in the body', access: 'signed-in', scope: 'orders', readsOnly: true,
    body: searchOrdersBody, forbidden: true,
    responses: { 200: { description: 'A page of orders', body: orderPageRepresentation } },
  },
  getOrder: {
    method: 'GET', path: '/orders/:id', summary: 'Read an order', access: 'signed-in', scope: 'orders',
    params: { id: orderInPath },
    query: getOrderQuery,
    responses: { 200: { description: 'The order', body: orderRepresentation, headers: ['ETag'] } },
  },
  updateOrder: {
    method: 'PATCH', path: '/orders/:id', summary: 'Change status (cancel; other moves are for admins) or coupon', access: 'signed-in', scope: 'orders',
    params: { id: orderInPath },
    body: patchOrderBody, forbidden: true, ifMatch: true, conflicts: ['ORDER_ALREADY_CANCELED', 'ORDER_NOT_CANCELABLE', 'ORDER_NOT_EDITABLE', 'CONFLICT'],
    responses: { 200: { description: 'The order', body: orderRepresentation, headers: ['ETag'] } },
  },
  replaceOrder: {
    method: 'PUT', path: '/orders/:id', summary: 'Replace items and coupon while PENDING', access: 'signed-in', scope: 'orders',
    params: { id: orderInPath },
    body: replaceOrderBody, ifMatch: true, conflicts: ['ORDER_NOT_EDITABLE', 'OUT_OF_STOCK', 'CONFLICT'],
    responses: { 200: { description: 'The order', body: orderRepresentation, headers: ['ETag'] } },
  },
  deleteOrder: {
    method: 'DELETE', path: '/orders/:id', summary: 'Delete an order (its stock is returned)', access: 'signed-in', scope: 'orders',
    params: { id: orderInPath },
    ifMatch: true, conflicts: ['CONFLICT'],
    responses: { 204: { description: 'Deleted' } },
  },
  listOrderItems: {
    method: 'GET', path: '/orders/:id/items', summary: "List an order's items", access: 'signed-in', scope: 'orders',
    params: { id: orderInPath },
    query: listItemsQuery,
    responses: { 200: { description: 'A page of order items', body: orderItemPageRepresentation } },
  },
  getOrderItem: {
    method: 'GET', path: '/order-items/:id', summary: 'Read an order item', access: 'signed-in', scope: 'orders',
    params: { id: resourceId('Order item') },
    responses: { 200: { description: 'The order item', body: orderItemRepresentation } },
  },
});

export function ordersRoutes(queries: OrderQueries, placeOrder: IdempotentUseCase<CreateOrderInput, OrderRow>, changeOrder: ChangeOrder) {
  return orderEndpoints.routes({
    listOrders: async ({ principal, query, res }) => {
      sendOrderPage(res, await queries.list(principal, query));
    },
    createOrder: async ({ principal, body, req, res }) => {
      const placed = await placeOrder(principal, body, checkedIdempotencyKey(req.header('idempotency-key'), 'Idempotency-Key'));
      const { body: answer, etag } = toPlacedOrderResponse(placed);
      res.status(201).location(publicPath('orders', answer.id)).setHeader('ETag', etag).json(answer);
    },
    searchOrders: async ({ principal, body, res }) => {
      sendOrderPage(res, await queries.list(principal, body));
    },
    getOrder: async ({ principal, params, query, res }) => {
      const order = await queries.get(principal, params.id);
      res.setHeader('ETag', etagOf(order)).json(toOrderResponse(order, { amountDetail: query.include?.includes('amountDetail') }));
    },
    updateOrder: async ({ principal, params, body, expectedVersion, res }) => {
      const order = await changeOrder.patch(principal, params.id, body, expectedVersion);
      res.setHeader('ETag', etagOf(order)).json(toOrderResponse(order));
    },
    replaceOrder: async ({ principal, params, body, expectedVersion, res }) => {
      const order = await changeOrder.replace(principal, params.id, body, expectedVersion);
      res.setHeader('ETag', etagOf(order)).json(toOrderResponse(order));
    },
    deleteOrder: async ({ principal, params, expectedVersion, res }) => {
      await changeOrder.delete(principal, params.id, expectedVersion);
      res.status(204).end();
    },
    listOrderItems: async ({ principal, params, query, res }) => {
      res.json(mapListItems(await queries.items(principal, params.id, query), toOrderItemResponse));
    },
    getOrderItem: async ({ principal, params, res }) => {
      res.json(toOrderItemResponse(await queries.item(principal, params.id)));
    },
  });
}
