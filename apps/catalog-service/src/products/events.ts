// The events catalog-service records about a product.
import { domainEvent, type DomainEvent } from '@platform/events';
import type { ProductRow } from './repository';

/** `at`: the use case's clock reading the row was written with (its createdAt, or its updatedAt), the event's time. */
export function productEvent(type: 'product.created' | 'product.updated', row: ProductRow, at: Date): DomainEvent {
  return domainEvent(type, row.id, { id: row.id, sku: row.sku, name: row.name, price: row.price, currency: row.currency, version: row.version }, at);
}
