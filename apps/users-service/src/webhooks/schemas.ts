// Request shapes of webhook endpoints and the event log. Unknown fields and parameters are refused.
import { eventTypes } from '@platform/events';
import { pagingQueryShape } from '@platform/paging';
import { commaList, z } from '@platform/validation';

const eventTypeList = eventTypes as [string, ...string[]];

const url = z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' }).max(2048);
const description = z.string().trim().max(500);
const eventType = z.enum(eventTypeList, { error: `must be one of ${eventTypes.join(', ')}` });

export const endpointScopes = ['OWN', 'ALL'] as const;
export const endpointStatuses = ['ENABLED', 'DISABLED'] as const;

export const createEndpointBody = z.strictObject({
  url,
  eventTypes: z.array(eventType).min(1).max(eventTypes.length).meta({ description: 'The event types to receive.' }),
  description: description.nullable().optional(),
  scope: z.enum(endpointScopes).optional().meta({ description: 'OWN (default): events about your own resources. ALL (admins only): every event.' }),
  ordered: z.boolean().optional().meta({ description: 'Deliver the events of one resource one at a time, in order: the next waits until the one before succeeded or its retries ran out.' }),
});

export const patchEndpointBody = z.strictObject({
  url: url.optional(),
  eventTypes: z.array(eventType).min(1).max(eventTypes.length).optional(),
  description: description.nullable().optional(),
  scope: z.enum(endpointScopes).optional(),
  ordered: z.boolean().optional(),
  status: z.enum(endpointStatuses).optional().meta({ description: 'DISABLED stops deliveries; ENABLED resumes them (also after an automatic disable).' }),
});

/** How long the replaced secret keeps signing beside the new one, at most (and by default): a day. */
export const MAX_SECRET_OVERLAP_S = 86_400;

export const rotateSecretBody = z.strictObject({
  overlapSeconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_SECRET_OVERLAP_S)
    .optional()
    .meta({ description: `How long the replaced secret keeps signing beside the new one, in seconds (0: it stops now, for a leaked secret; default and most ${MAX_SECRET_OVERLAP_S}, 24 hours).` }),
});

export const listEndpointsQuery = z.strictObject({ ...pagingQueryShape });

export const listDeliveriesQuery = z.strictObject({
  ...pagingQueryShape,
  status: commaList(['PENDING', 'SUCCEEDED', 'FAILED']).optional(),
});

export const listEventsQuery = z.strictObject({
  ...pagingQueryShape,
  type: commaList(eventTypeList).optional().meta({ description: 'Event types, comma-separated.' }),
  resource: z
    .string()
    .regex(/^[a-z_]+\/[A-Za-z0-9_-]{1,100}$/, { error: 'must be <resource type>/<id>, e.g. order/0b6f…' })
    .optional()
    .meta({ description: 'Only events about this resource: `<resource type>/<id>` (the `subject` of an event), e.g. `order/<id>`.' }),
});

export const eventSortFields = ['time'] as const;
export const endpointSortFields = ['createdAt'] as const;

export type CreateEndpointInput = z.output<typeof createEndpointBody>;
export type PatchEndpointInput = z.output<typeof patchEndpointBody>;
export type ListEventsQuery = z.output<typeof listEventsQuery>;
export type ListDeliveriesQuery = z.output<typeof listDeliveriesQuery>;

export type RotateSecretInput = z.output<typeof rotateSecretBody>;
