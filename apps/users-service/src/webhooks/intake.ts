// Events in: every service's events (libs/events consumer, the same code on NATS and on the
// embedded transport) are logged for GET /events and fanned out to the endpoints that want them.
// The consumer hands each resource's events over in sequence, so the log's order per resource is
// the order they happened in; a redelivered event is logged once and queued once. It reads every
// service's events: users-service's entry in libs/events' eventSubscriptions.
import { type EventHandlers, type EventType, eventTypes, type ReceivedEvent } from '@platform/events';
import type { WebhookRepository } from './repository';

/**
 * The user whose resource the event is about: the user, the order's or review's customer, the
 * endpoint's owner. Catalog and stock events belong to no one (admins with scope ALL get them).
 */
async function ownerOf(event: ReceivedEvent, webhooks: WebhookRepository): Promise<string | null> {
  const data = event.data as { id?: string; userId?: string | null; orderId?: string };
  switch (event.aggregateType) {
    case 'user':
      return data.id ?? null;
    case 'review':
    case 'webhook_endpoint':
      return data.userId ?? null;
    case 'order':
      // A cancellation's completion names the order, not its customer: the order's earlier events do.
      return data.userId !== undefined ? data.userId : webhooks.lastOwnerOf(`order/${event.aggregateId}`);
    default:
      return null;
  }
}

/**
 * The event's data as its producer sent it, for the log and the fan-out. Handlers read data
 * tolerantly (fields this version does not know are dropped, libs/events receivedDataOf), so that
 * a producer deployed ahead with a new field keeps being handled; but what is logged here is kept
 * and sent to receivers for good, and that field belongs in it: the producer's contract has it.
 */
function dataAsSent(event: ReceivedEvent): unknown {
  const sent = event.cloudEvent.data;
  return typeof sent === 'object' && sent !== null && !Array.isArray(sent) ? sent : event.data;
}

export function webhookEventHandlers(webhooks: WebhookRepository, options: { clock?: () => Date; onDeliveriesDue: () => void }): EventHandlers {
  const clock = options.clock ?? (() => new Date());
  const accept = async (event: ReceivedEvent) => {
    const queued = await webhooks.logAndFanOut(
      {
        id: event.id,
        type: event.type,
        source: event.source.replace(/^\//, ''),
        subject: `${event.aggregateType}/${event.aggregateId}`,
        ownerId: await ownerOf(event, webhooks),
        data: dataAsSent(event),
        occurredAt: new Date(event.time),
      },
      clock(),
    );
    if (queued) options.onDeliveriesDue();
  };
  return Object.fromEntries(eventTypes.map((type: EventType) => [type, accept])) as EventHandlers;
}
