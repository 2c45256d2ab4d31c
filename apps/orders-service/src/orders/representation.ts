// The public shapes of orders, items and shipments, and every mapping from rows to them: REST
// answers them, and the GraphQL resolvers answer the same objects (graphql/resolvers.ts adds only
// the references and the version). The schemas are what the OpenAPI document publishes; the
// mappers are typed by them, so they agree.
import { component } from '@platform/endpoints';
import { listEnvelopeSchema } from '@platform/paging';
import { idField, z } from '@platform/validation';
import type { IdempotentAnswer, Once } from '../idempotency/idempotent';
import type { OrderItemRow, OrderRow } from './repository';
import { orderStatuses } from './status';

const money = z.number().int().min(0).meta({ description: 'In the smallest unit of the currency.' });

export const orderItemRepresentation = component('OrderItem', z.object({
  id: idField(),
  orderId: idField(),
  productId: idField(),
  sku: z.string(),
  productName: z.string().meta({ description: "The product's name when the order was placed; it stays when the product is renamed or deleted from the catalog." }),
  quantity: z.number().int().min(1),
  unitPrice: money,
  amount: money,
}));

export const orderItemPageRepresentation = component('OrderItemPage', listEnvelopeSchema(orderItemRepresentation));

export type OrderItemResponse = z.infer<typeof orderItemRepresentation>;

export const orderRepresentation = component('Order', z.object({
  id: idField(),
  orderId: idField().meta({ description: 'The same as `id`, kept for clients of the first version.' }),
  userId: idField().nullable().meta({ description: 'Who placed it; null once they deleted their account (the order stays, a financial record, without the link to them).' }),
  status: z.enum(orderStatuses),
  amount: money,
  currency: z.string().regex(/^[A-Z]{3}$/).meta({ description: 'ISO 4217 code.' }),
  productId: idField().nullable().meta({ description: 'The first item\'s product.' }),
  couponCode: z.string().nullable(),
  hasCoupon: z.boolean(),
  items: z.array(orderItemRepresentation),
  createdAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  canceledAt: z.iso.datetime().nullable(),
  amountDetail: z
    .object({ supply: money, vat: money, total: money })
    .optional()
    .meta({ description: 'VAT-inclusive split of `amount`; only with `include=amountDetail`.' }),
}));

export const orderPageRepresentation = component('OrderPage', listEnvelopeSchema(orderRepresentation));

export type OrderResponse = z.infer<typeof orderRepresentation>;

export const shipmentStatuses = ['PREPARING', 'SHIPPED', 'DELIVERED'] as const;

export const shipmentRepresentation = component('Shipment', z.object({
  orderId: idField(),
  status: z.enum(shipmentStatuses),
  carrier: z.string().nullable(),
  trackingNumber: z.string().nullable(),
  shippedAt: z.iso.datetime().nullable(),
}));

export type ShipmentResponse = z.infer<typeof shipmentRepresentation>;

/**
 * Fields of the record the order's representation leaves out on purpose, each for a reason:
 * `reservationKey` is inventory's handle, no client's business; `version` is answered as the ETag
 * (and GraphQL's `version`); `shipment` is a resource of its own (/orders/{id}/shipment, and
 * GraphQL's `shipment`). Any other field of `OrderRow` must be in the representation, or the
 * check below fails to compile, naming it (docs/adding-a-field.md, step 3).
 */
/** Compiles only when `Names` is empty; otherwise the error names them ("Type '"giftMessage"' does not satisfy the constraint 'never'"). */
type NoneMissing<Names extends never> = Names;

/**
 * Fields of the record the order's representation leaves out on purpose, each for a reason:
 * `reservationKey` is inventory's handle, no client's business; `version` is answered as the ETag
 * (and GraphQL's `version`); `shipment` is a resource of its own (/orders/{id}/shipment, and
 * GraphQL's `shipment`). Any other field of `OrderRow` (and every field of `OrderItemRow`) must
 * be in the representation, or the checks below fail to compile, naming it
 * (docs/adding-a-field.md, step 3). They are exported only so that they count as used.
 */
type OrderFieldsNotAnswered = 'reservationKey' | 'version' | 'shipment';
type OrderFieldsUnanswered = Exclude<keyof OrderRow, keyof OrderResponse | OrderFieldsNotAnswered>;
export type EveryOrderFieldIsAnswered = NoneMissing<OrderFieldsUnanswered>;
type ItemFieldsUnanswered = Exclude<keyof OrderItemRow, keyof OrderItemResponse>;
export type EveryItemFieldIsAnswered = NoneMissing<ItemFieldsUnanswered>;

export function toOrderItemResponse(item: OrderItemRow): OrderItemResponse {
  return { id: item.id, orderId: item.orderId, productId: item.productId, sku: item.sku, productName: item.productName, quantity: item.quantity, unitPrice: item.unitPrice, amount: item.amount };
}

/** VAT-inclusive split (10 % VAT): vat = round(total / 11), supply = total - vat. */
export function amountDetailOf(total: number) {
  const vat = Math.round(total / 11);
  return { supply: total - vat, vat, total };
}

export function toOrderResponse(order: OrderRow, options: { amountDetail?: boolean } = {}): OrderResponse {
  return {
    id: order.id,
    orderId: order.id,
    userId: order.userId,
    status: order.status,
    amount: order.amount,
    currency: order.currency,
    productId: order.items[0]?.productId ?? null,
    couponCode: order.couponCode,
    hasCoupon: order.couponCode !== null,
    items: order.items.map(toOrderItemResponse),
    createdAt: order.createdAt.toISOString(),
    updatedAt: order.updatedAt.toISOString(),
    canceledAt: order.canceledAt?.toISOString() ?? null,
    ...(options.amountDetail ? { amountDetail: amountDetailOf(order.amount) } : {}),
  };
}

export function toShipmentResponse(orderId: string, shipment: OrderRow['shipment']): ShipmentResponse {
  return {
    orderId,
    status: shipment?.status ?? 'PREPARING',
    carrier: shipment?.carrier ?? null,
    trackingNumber: shipment?.trackingNumber ?? null,
    shippedAt: shipment?.shippedAt?.toISOString() ?? null,
  };
}

/** An order is written at version 1 (the column's default) and counts up from there. */
export const PLACED_VERSION = 1;

export function etagOf(order: Pick<OrderRow, 'version'>): string {
  return `"${order.version}"`;
}

/** What an Idempotency-Key stores for a placed order: POST /orders's status and body. */
export function toPlacedOrderAnswer(order: OrderRow): IdempotentAnswer {
  return { status: 201, body: toOrderResponse(order) };
}

/**
 * The response to POST /orders: a new order as it is, or a replay's stored body with the ETag of
 * the order as placed (so an If-Match with it fails once the order changed).
 */
export function toPlacedOrderResponse(placed: Once<OrderRow>): { body: OrderResponse; etag: string } {
  if (placed.kind === 'replayed') {
    // jsonb keeps no key order: the stored body goes back into the representation's order (the
    // mapper's), so the replay is byte for byte the first answer. A body stored under an older
    // representation that no longer parses is answered as stored.
    const stored = orderRepresentation.safeParse(placed.answer.body);
    return { body: stored.success ? stored.data : (placed.answer.body as OrderResponse), etag: etagOf({ version: PLACED_VERSION }) };
  }
  return { body: toOrderResponse(placed.result), etag: etagOf(placed.result) };
}
