// The events catalog-service records about a product.
import { domainEvent, type DomainEvent } from '@platform/events';
import type { ProductRow } from './repository';

export function productEvent(type: 'product.created' | 'product.updated', row: ProductRow): DomainEvent {
  return domainEvent(type, row.id, { id: row.id, sku: row.sku, name: row.name, price: row.price, currency: row.currency, version: row.version });
}
