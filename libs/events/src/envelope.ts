// The envelope: CloudEvents 1.0 through the `cloudevents` package, plus one extension attribute,
// `aggregatesequence` (1, 2, 3… per aggregate), which consumers order and deduplicate by.
import { CloudEvent } from 'cloudevents';
import { dataSchemaOf, eventCatalog, type EventType, isEventType, receivedDataOf } from './catalog';

/** An event as the outbox holds it (and the relay reads it). */
export interface RecordedEvent {
  id: string;
  type: string;
  aggregateType: string;
  aggregateId: string;
  sequence: number;
  data: unknown;
  occurredAt: Date;
}

/** A CloudEvent of ours: the known attributes typed, `aggregatesequence` included. */
export type PlatformEvent = CloudEvent<unknown> & { aggregatesequence: number };

/** The CloudEvent of a recorded event; `source` names the producing service (`/orders-service`). */
export function toCloudEvent(source: string, event: RecordedEvent): PlatformEvent {
  return new CloudEvent({
    id: event.id,
    source,
    type: event.type,
    time: event.occurredAt.toISOString(),
    subject: `${event.aggregateType}/${event.aggregateId}`,
    datacontenttype: 'application/json',
    dataschema: isEventType(event.type) ? dataSchemaOf(event.type) : undefined,
    data: event.data,
    aggregatesequence: event.sequence,
  }) as PlatformEvent;
}

/** What a consumer needs of a received event: the parts it keys and orders by, and the checked data. */
export interface ReceivedEvent<T extends EventType = EventType> {
  id: string;
  source: string;
  type: T;
  aggregateType: string;
  aggregateId: string;
  sequence: number;
  time: string;
  data: unknown;
  /** The event as received, for the dead-letter table. */
  cloudEvent: Record<string, unknown>;
}

export class MalformedEvent extends Error {}

/**
 * Reads a CloudEvent in its JSON form (structured mode): the envelope is checked by the
 * `cloudevents` package, the data by the type's schema (fields it does not name are dropped, not
 * refused: see receivedDataOf). Throws MalformedEvent otherwise.
 */
export function fromCloudEventJson(json: Record<string, unknown>): ReceivedEvent {
  let event: CloudEvent<unknown>;
  try {
    event = new CloudEvent(json as never);
  } catch (error) {
    throw new MalformedEvent(`not a CloudEvent: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isEventType(event.type)) throw new MalformedEvent(`unknown event type ${event.type}`);
  const sequence = Number(event['aggregatesequence']);
  // The type ends at the first slash; the id is all the rest: inventory's SKUs may hold slashes
  // (`stock/AB/12`), and cut at the next one, two SKUs became one aggregate here (`AB`), the
  // later one's events dropped as its duplicates.
  const subject = event.subject ?? '';
  const slash = subject.indexOf('/');
  const aggregateType = slash < 0 ? subject : subject.slice(0, slash);
  const aggregateId = slash < 0 ? '' : subject.slice(slash + 1);
  if (!Number.isInteger(sequence) || sequence < 1 || !aggregateId) throw new MalformedEvent(`event ${event.id} has no aggregate subject or sequence`);
  if (aggregateType !== eventCatalog[event.type].aggregate) throw new MalformedEvent(`event ${event.id}: ${event.type} is not about a ${aggregateType}`);
  const data = receivedDataOf(event.type).safeParse(event.data);
  if (!data.success) throw new MalformedEvent(`event ${event.id}: data does not match ${event.type}: ${data.error.message}`);
  return { id: event.id, source: event.source, type: event.type, aggregateType, aggregateId, sequence, time: event.time ?? '', data: data.data, cloudEvent: json };
}
