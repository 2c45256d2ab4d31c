export { dataSchemaOf, domainEvent, eventCatalog, eventJsonSchemas, eventTypes, isEventType, type DomainEvent, type EventData, type EventType } from './catalog';
export { fromCloudEventJson, MalformedEvent, toCloudEvent, type PlatformEvent, type ReceivedEvent, type RecordedEvent } from './envelope';
export { InvalidEvent, OUTBOX_CHANNEL, outboxBacklog, recordEvent, type SqlClient, type SqlDatabase } from './outbox';
export { OutboxRelay, startOutboxRelay, type OutboxDatabase, type RelaySettings } from './relay';
export { EventConsumer, type ConsumerSettings, type DeadLetter, type EventHandlers, type HandleOutcome } from './consumer';
export { EmbeddedTransport, eventLogRoutes, sqlCursorStore, type CursorStore, type EmbeddedTransportSettings } from './embedded-transport';
export type { Consumption, Delivery, EventTransport, Subscription } from './transport';
export { eventsConfigShape } from './config';
export { connectNatsIfConfigured, EVENTS_STREAM, NatsTransport, type NatsTransportSettings } from './nats-transport';
