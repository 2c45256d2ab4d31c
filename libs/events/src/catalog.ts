// Every event the platform emits: its type, the aggregate it belongs to, its version and the zod
// schema of its data. The outbox checks each event against it before writing; consumers check
// what they receive; the JSON Schema published beside the OpenAPI document is generated from it.
// Objects are strict: a field the schema does not name (a password hash, a token) is refused, so
// an event can never carry more than what is written here.
import { z } from 'zod';

const id = z.uuid();
const timestamp = z.iso.datetime({ offset: true });
const money = z.number().int();

const userData = z.strictObject({
  id,
  role: z.enum(['customer', 'admin']),
  name: z.string(),
  email: z.string(),
  version: z.number().int(),
  createdAt: timestamp,
});

const orderItemData = z.strictObject({
  id,
  productId: id,
  sku: z.string(),
  productName: z.string(),
  quantity: z.number().int(),
  unitPrice: money,
  amount: money,
});

const orderData = z.strictObject({
  id,
  /** Null once the customer deleted their account (the order is kept without the link to them). */
  userId: id.nullable(),
  status: z.enum(['PENDING', 'CONFIRMED', 'SHIPPED', 'DELIVERED', 'CANCELED']),
  amount: money,
  currency: z.string().length(3),
  couponCode: z.string().nullable(),
  items: z.array(orderItemData),
  version: z.number().int(),
  createdAt: timestamp,
});

const productData = z.strictObject({
  id,
  sku: z.string(),
  name: z.string(),
  price: money,
  currency: z.string().length(3),
  version: z.number().int(),
});

interface EventDefinition<A extends string, S extends z.ZodType> {
  /** What the event is about; its events share one sequence per aggregate id. */
  aggregate: A;
  /** Raised when the data's shape changes incompatibly; it is part of the CloudEvent's dataschema. */
  version: number;
  description: string;
  data: S;
  /**
   * Why no webhook endpoint with scope OWN ever receives it, for a type only endpoints with scope
   * ALL (admins') get: the webhooks section of the OpenAPI document says so, so a customer is not
   * offered an event that cannot reach them. Unset: an OWN endpoint gets those about its owner's resources.
   */
  allScopeOnly?: string;
}

function defineEvent<A extends string, S extends z.ZodType>(definition: EventDefinition<A, S>): EventDefinition<A, S> {
  return definition;
}

export const eventCatalog = {
  'user.created': defineEvent({ aggregate: 'user', version: 1, description: 'A user signed up (or was created by an admin).', data: userData }),
  'user.updated': defineEvent({ aggregate: 'user', version: 1, description: "A user's profile or credentials changed; the data is the profile after the change.", data: userData }),
  'user.deleted': defineEvent({
    aggregate: 'user',
    version: 1,
    description: "A user's account was deleted.",
    data: z.strictObject({ id }),
    allScopeOnly: "a user's own endpoints are deleted with their account, so they never receive their own user.deleted",
  }),
  'order.created': defineEvent({ aggregate: 'order', version: 1, description: 'An order was placed (status PENDING).', data: orderData }),
  'order.updated': defineEvent({ aggregate: 'order', version: 1, description: "An order's items or coupon changed while it was PENDING.", data: orderData }),
  'order.confirmed': defineEvent({ aggregate: 'order', version: 1, description: 'An order moved to CONFIRMED.', data: orderData }),
  'order.canceled': defineEvent({ aggregate: 'order', version: 1, description: 'An order was canceled; its stock is being released.', data: orderData }),
  'order.shipped': defineEvent({ aggregate: 'order', version: 1, description: 'An order moved to SHIPPED.', data: orderData }),
  'order.delivered': defineEvent({ aggregate: 'order', version: 1, description: 'An order moved to DELIVERED.', data: orderData }),
  'order.unlinked': defineEvent({
    aggregate: 'order',
    version: 1,
    description: "An order lost its link to a customer who deleted their account: the order is kept, a financial record, with userId null; the data is the order after the change.",
    data: orderData,
    allScopeOnly: 'the order belongs to no customer any more, and the one it belonged to has no endpoints left',
  }),
  'order.deleted': defineEvent({ aggregate: 'order', version: 1, description: 'An order was deleted.', data: z.strictObject({ id, userId: id.nullable() }) }),
  'order.cancellation.completed': defineEvent({
    aggregate: 'order',
    version: 1,
    description: 'A cancellation requested with POST /orders/{id}/cancellation (202) was completed.',
    data: z.strictObject({
      cancellationId: id,
      orderId: id,
      outcome: z.enum(['canceled', 'already-canceled', 'not-cancelable', 'gone']),
      refundAmount: money,
    }),
  }),
  'product.created': defineEvent({ aggregate: 'product', version: 1, description: 'A product was added to the catalog.', data: productData, allScopeOnly: 'catalog events belong to no customer' }),
  'product.updated': defineEvent({ aggregate: 'product', version: 1, description: 'A product changed; the data is the product after the change.', data: productData, allScopeOnly: 'catalog events belong to no customer' }),
  'product.deleted': defineEvent({ aggregate: 'product', version: 1, description: 'A product was removed from the catalog; it can no longer be ordered.', data: z.strictObject({ id, sku: z.string() }), allScopeOnly: 'catalog events belong to no customer' }),
  'review.created': defineEvent({
    aggregate: 'review',
    version: 1,
    description: 'A product was reviewed.',
    data: z.strictObject({ id, productId: id, userId: id, rating: z.number().int().min(1).max(5) }),
  }),
  'stock.changed': defineEvent({
    aggregate: 'stock',
    version: 1,
    description: "A SKU's available stock crossed the low-stock threshold, down (low: true) or back up (low: false), or a SKU was created below it (low: true).",
    data: z.strictObject({ sku: z.string(), available: z.number().int(), reserved: z.number().int(), lowStockThreshold: z.number().int(), low: z.boolean() }),
    allScopeOnly: 'stock belongs to no customer',
  }),
  'webhook_endpoint.disabled': defineEvent({
    aggregate: 'webhook_endpoint',
    version: 1,
    description: 'A webhook endpoint was disabled after failing every delivery for 5 days; its owner can enable it again (PATCH status ENABLED). Never carries the signing secret.',
    data: z.strictObject({ id, userId: id, url: z.string(), failingSince: timestamp, disabledAt: timestamp }),
  }),
} as const;

export type EventType = keyof typeof eventCatalog;
export type EventData<T extends EventType> = z.infer<(typeof eventCatalog)[T]['data']>;
export type AggregateOf<T extends EventType> = (typeof eventCatalog)[T]['aggregate'];

export const eventTypes = Object.keys(eventCatalog) as EventType[];

export function isEventType(type: string): type is EventType {
  return Object.hasOwn(eventCatalog, type);
}

/** A change to record: which event, about which aggregate, with which data. */
export interface DomainEvent<T extends EventType = EventType> {
  type: T;
  aggregateId: string;
  data: EventData<T>;
  /**
   * When the change happened, when the use case read the clock for it (an order's createdAt): the
   * event's `time` is then exactly that. Unset: the start of the transaction that records it.
   */
  occurredAt?: Date;
}

/** Builds an event; the data is checked against the type's schema when it is recorded. */
export function domainEvent<T extends EventType>(type: T, aggregateId: string, data: EventData<T>, occurredAt?: Date): DomainEvent<T> {
  return occurredAt ? { type, aggregateId, data, occurredAt } : { type, aggregateId, data };
}

/**
 * `schema` with every object reading past fields it does not name (dropping them) instead of
 * refusing them, nested objects included. Recording stays strict (no event carries more than the
 * catalog says); receiving is tolerant, since a producer deployed ahead may add a field (a change
 * the contracts gate calls safe) and its consumers must go on handling its events meanwhile.
 */
function tolerantOf(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) return z.object(Object.fromEntries(Object.entries(schema.shape).map(([key, field]) => [key, tolerantOf(field as z.ZodType)])));
  if (schema instanceof z.ZodArray) return z.array(tolerantOf(schema.element as z.ZodType));
  if (schema instanceof z.ZodNullable) return tolerantOf(schema.unwrap() as z.ZodType).nullable();
  if (schema instanceof z.ZodOptional) return tolerantOf(schema.unwrap() as z.ZodType).optional();
  return schema;
}

const receivedSchemas = Object.fromEntries(eventTypes.map((type) => [type, tolerantOf(eventCatalog[type].data)])) as Record<EventType, z.ZodType>;

/** The schema a consumer reads `type`'s data with: the catalog's, tolerating fields it does not name. */
export function receivedDataOf(type: EventType): z.ZodType {
  return receivedSchemas[type];
}

/** The URI a CloudEvent's `dataschema` names: the type and version of its data's schema. */
export function dataSchemaOf(type: EventType): string {
  return `urn:order-platform:event:${type}:v${eventCatalog[type].version}`;
}

/** Every event type's data as JSON Schema (draft 2020-12), for the document published beside the OpenAPI one. */
export function eventJsonSchemas(): Record<string, unknown> {
  return Object.fromEntries(
    eventTypes.map((type) => {
      const definition = eventCatalog[type];
      return [type, { ...z.toJSONSchema(definition.data, { target: 'draft-2020-12' }), $id: dataSchemaOf(type), title: type, description: definition.description }];
    }),
  );
}
