// The events orders-service records about an order, each written by the unit of work that makes
// the change (one use case, one emit: REST, GraphQL and the workers call the same use cases).
import { domainEvent, type DomainEvent } from '@platform/events';
import type { OrderRow, OrderWrites } from './repository';
import type { OrderStatus } from './status';

export type OrderEventType = 'order.created' | 'order.updated' | 'order.confirmed' | 'order.canceled' | 'order.shipped' | 'order.delivered' | 'order.unlinked';

/** The event of an order's move to `status`; PENDING is no move anyone makes. */
export function statusEventOf(status: OrderStatus): OrderEventType | undefined {
  const events: Partial<Record<OrderStatus, OrderEventType>> = { CONFIRMED: 'order.confirmed', SHIPPED: 'order.shipped', DELIVERED: 'order.delivered', CANCELED: 'order.canceled' };
  return events[status];
}

/** `occurredAt`: when the change happened, the use case's clock reading the order was written with (its createdAt or updatedAt). */
export function orderEvent(type: OrderEventType, row: OrderRow, occurredAt?: Date): DomainEvent {
  const data = {
    id: row.id,
    userId: row.userId,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    couponCode: row.couponCode,
    items: row.items.map((item) => ({ id: item.id, productId: item.productId, sku: item.sku, productName: item.productName, quantity: item.quantity, unitPrice: item.unitPrice, amount: item.amount })),
    version: row.version,
    createdAt: row.createdAt.toISOString(),
  };
  return domainEvent(type, row.id, data, occurredAt);
}

/**
 * Records `type` for the order as this unit of work leaves it, as having happened `at`: the clock
 * reading the unit of work wrote as the order's updatedAt. Unset, the event took the transaction's
 * start, milliseconds before the updatedAt a webhook receiver then compares it with.
 */
export async function recordOrderEvent(writes: OrderWrites, type: OrderEventType, orderId: string, at: Date): Promise<void> {
  await writes.recordEvent(orderEvent(type, await writes.findById(orderId), at));
}
