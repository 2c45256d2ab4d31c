// The public shapes of webhook endpoints, deliveries and events (REST and the OpenAPI
// document). The signing secret appears in one shape only, the answer to a create or a rotation.
import { eventTypes } from '@platform/events';
import { component } from '@platform/endpoints';
import { listEnvelopeSchema } from '@platform/paging';
import { idField, z } from '@platform/validation';
import type { AttemptRow, DeliveryRow, EndpointRow, EventRow } from './repository';
import { endpointScopes, endpointStatuses } from './schemas';

const timestamp = z.iso.datetime();

export const webhookEndpointRepresentation = component('WebhookEndpoint', z.object({
  id: idField(),
  url: z.url(),
  description: z.string().nullable(),
  eventTypes: z.array(z.enum(eventTypes as [string, ...string[]])),
  scope: z.enum(endpointScopes),
  ordered: z.boolean(),
  status: z.enum(endpointStatuses),
  disabledAt: timestamp.nullable().meta({ description: 'When it was disabled (by its owner, or after failing for 5 days); null while enabled.' }),
  failingSince: timestamp.nullable().meta({ description: 'The first failed attempt since the last success; null while deliveries succeed.' }),
  createdAt: timestamp,
  updatedAt: timestamp,
}));

export const webhookEndpointPageRepresentation = component('WebhookEndpointPage', listEnvelopeSchema(webhookEndpointRepresentation));

/** A create or a rotation: the endpoint and its secret, shown this once. */
export const webhookEndpointWithSecretRepresentation = component('WebhookEndpointWithSecret', webhookEndpointRepresentation.extend({
  secret: z.string().regex(/^whsec_[A-Za-z0-9+/=]+$/).meta({ description: 'The signing secret (Standard Webhooks). Shown only in this answer: store it now.' }),
  previousSecretExpiresAt: timestamp.nullable().meta({ description: 'After a rotation: until when the previous secret signs deliveries too.' }),
}));

export const webhookAttemptRepresentation = component('WebhookAttempt', z.object({
  attemptedAt: timestamp,
  outcome: z.enum(['SUCCEEDED', 'HTTP_ERROR', 'TIMEOUT', 'NETWORK_ERROR', 'FORBIDDEN_ADDRESS']),
  statusCode: z.number().int().min(100).max(599).nullable(),
  latencyMs: z.number().int().min(0),
  responseBody: z.string().nullable().meta({ description: 'The first characters of the answer (at most 1024).' }),
  error: z.string().nullable(),
}));

export const webhookDeliveryRepresentation = component('WebhookDelivery', z.object({
  id: idField(),
  endpointId: idField(),
  eventId: idField(),
  eventType: z.string(),
  subject: z.string(),
  status: z.enum(['PENDING', 'SUCCEEDED', 'FAILED']),
  attemptCount: z.number().int().min(0),
  nextAttemptAt: timestamp.nullable(),
  createdAt: timestamp,
  attempts: z.array(webhookAttemptRepresentation),
}));

export const webhookDeliveryPageRepresentation = component('WebhookDeliveryPage', listEnvelopeSchema(webhookDeliveryRepresentation));

/** An event as GET /events lists it and as a webhook's body carries it. */
export const webhookEventRepresentation = component('Event', z.object({
  id: idField().meta({ description: 'The event id; also the `webhook-id` of its deliveries, the key to deduplicate on.' }),
  type: z.string(),
  timestamp,
  subject: z.string().meta({ description: '`<resource type>/<id>`: what the event is about.' }),
  data: z.record(z.string(), z.unknown()),
}));

export const webhookEventPageRepresentation = component('EventPage', listEnvelopeSchema(webhookEventRepresentation));

export type WebhookEndpointResponse = z.infer<typeof webhookEndpointRepresentation>;
export type WebhookEventResponse = z.infer<typeof webhookEventRepresentation>;

export function toEndpointResponse(row: EndpointRow): WebhookEndpointResponse {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes,
    scope: row.scope as WebhookEndpointResponse['scope'],
    ordered: row.ordered,
    status: row.status as WebhookEndpointResponse['status'],
    disabledAt: row.disabledAt?.toISOString() ?? null,
    failingSince: row.failingSince?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toEndpointWithSecretResponse(row: EndpointRow): z.infer<typeof webhookEndpointWithSecretRepresentation> {
  return { ...toEndpointResponse(row), secret: row.secret, previousSecretExpiresAt: row.previousSecretExpiresAt?.toISOString() ?? null };
}

export function toEventResponse(row: EventRow): WebhookEventResponse {
  return { id: row.id, type: row.type, timestamp: row.occurredAt.toISOString(), subject: row.subject, data: row.data as Record<string, unknown> };
}

export function toDeliveryResponse(row: DeliveryRow & { attempts: AttemptRow[]; event: { type: string } }): z.infer<typeof webhookDeliveryRepresentation> {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    eventType: row.event.type,
    subject: row.subject,
    status: row.status as 'PENDING' | 'SUCCEEDED' | 'FAILED',
    attemptCount: row.attemptCount,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
    attempts: row.attempts.map((attempt) => ({
      attemptedAt: attempt.attemptedAt.toISOString(),
      outcome: attempt.outcome as z.infer<typeof webhookAttemptRepresentation>['outcome'],
      statusCode: attempt.statusCode,
      latencyMs: attempt.latencyMs,
      responseBody: attempt.responseBody,
      error: attempt.error,
    })),
  };
}
