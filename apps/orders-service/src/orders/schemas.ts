// Request shapes of orders. Unknown fields and parameters are refused; a client-sent amount is
// an unknown field (the server prices orders).
import { pagingBodyShape, pagingQueryShape } from '@platform/paging';
import { commaList, idField, int32, isoDate, MAX_ORDER_ITEMS, queryBoolean, queryInt, resourceId, z } from '@platform/validation';
import { orderStatuses } from './status';

/** The order a path names: /orders/{id} and what hangs under it (items, shipment, cancellation). */
export const orderInPath = resourceId('Order');

const item = z.strictObject({ productId: idField(), quantity: z.number().int().min(1).max(1000) });
const couponCode = z.string().regex(/^[A-Z0-9-]{3,32}$/, { error: 'couponCode is 3 to 32 upper-case letters, digits or dashes' });
const items = z
  .array(item)
  .min(1)
  .max(MAX_ORDER_ITEMS)
  .refine((list) => new Set(list.map((entry) => entry.productId)).size === list.length, { message: 'must name each product once', params: { code: 'NOT_ALLOWED' } });

// A couponCode of null is no coupon, as GraphQL's nullable input field lets a client send it.
export const createOrderBody = z.strictObject({ items, couponCode: couponCode.nullable().optional() });

/** PUT: the whole editable order; a couponCode not sent is cleared. */
export const replaceOrderBody = z.strictObject({ items, couponCode: couponCode.nullable().optional() });

export const patchOrderBody = z.strictObject({ status: z.enum(orderStatuses).optional(), couponCode: couponCode.nullable().optional() });

export const orderSortFields = ['createdAt', 'amount'] as const;

export const getOrderQuery = z.strictObject({ include: commaList(['amountDetail'] as const).optional() });

const filterShape = {
  userId: idField().optional(),
  q: z.string().trim().min(1).max(100).optional(),
};

export const listOrdersQuery = z.strictObject({
  ...pagingQueryShape,
  ...filterShape,
  status: commaList(orderStatuses).optional(),
  from: isoDate().optional(),
  to: isoDate().optional(),
  minAmount: queryInt().optional(),
  hasCoupon: queryBoolean().optional(),
});

export const searchOrdersBody = z.strictObject({
  ...pagingBodyShape,
  ...filterShape,
  status: z.array(z.enum(orderStatuses)).min(1).optional(),
  from: isoDate().optional(),
  to: isoDate().optional(),
  minAmount: int32().optional(),
  hasCoupon: z.boolean().optional(),
  ids: z.array(idField()).min(1).max(1000).optional(),
});

export const listItemsQuery = z.strictObject({ ...pagingQueryShape });

export const cancellationBody = z.strictObject({ reason: z.string().trim().min(1).max(500).optional() });

export const shipmentBody = z.strictObject({
  status: z.enum(['PREPARING', 'SHIPPED', 'DELIVERED']),
  carrier: z.string().trim().min(1).max(100).nullable().optional(),
  trackingNumber: z.string().trim().min(1).max(100).nullable().optional(),
});

export type CreateOrderInput = z.output<typeof createOrderBody>;
export type ReplaceOrderInput = z.output<typeof replaceOrderBody>;
export type PatchOrderInput = z.output<typeof patchOrderBody>;
export type OrderSearch = z.output<typeof searchOrdersBody>;
export type ShipmentInput = z.output<typeof shipmentBody>;
