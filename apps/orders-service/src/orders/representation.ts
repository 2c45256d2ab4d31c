// The public shapes of orders, items and shipments.
import type { OrderItemRow, OrderRow } from './repository';

export function toOrderItemResponse(item: OrderItemRow) {
  return { id: item.id, orderId: item.orderId, productId: item.productId, sku: item.sku, quantity: item.quantity, unitPrice: item.unitPrice, amount: item.amount };
}

/** VAT-inclusive split (10 % VAT): vat = round(total / 11), supply = total - vat. */
export function amountDetailOf(total: number) {
  const vat = Math.round(total / 11);
  return { supply: total - vat, vat, total };
}

export function toOrderResponse(order: OrderRow, options: { amountDetail?: boolean } = {}) {
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

export type OrderResponse = ReturnType<typeof toOrderResponse>;

export function toShipmentResponse(orderId: string, shipment: OrderRow['shipment']) {
  return {
    orderId,
    status: shipment?.status ?? 'PREPARING',
    carrier: shipment?.carrier ?? null,
    trackingNumber: shipment?.trackingNumber ?? null,
    shippedAt: shipment?.shippedAt?.toISOString() ?? null,
  };
}

export function etagOf(order: OrderRow): string {
  return `"${order.version}"`;
}
