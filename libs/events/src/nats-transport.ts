// The broker transport: NATS JetStream, when NATS_URL is set. One stream, EVENTS, on file
// storage; a publish counts once JetStream acknowledged it (stored), and its event id is the
// message id, so a batch the relay publishes again after a crash is dropped as a duplicate within
// the stream's window. Each producer's events are spread over PARTITIONS subjects by aggregate
// (`events.<producing service>.p<n>.<event type>`, n from a hash of the CloudEvents subject), and
// a consumer has one durable consumer per producer and partition, with explicit acks and one
// message in flight: an aggregate's events stay in one partition, so they are handled in stream
// order even across redeliveries, while the partitions are handled side by side (with one in
// flight per producer, every event waited for the previous one's handling and ack).
import { createHash } from 'node:crypto';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { Logger } from '@platform/service-kit';
import type { PlatformEvent } from './envelope';
import type { Consumption, Delivery, EventTransport, Subscription } from './transport';

export const EVENTS_STREAM = 'EVENTS';
/**
 * Partitions per producer. Producers and consumers must agree: changing it moves aggregates to
 * other partitions, so it is done with the relays stopped and the consumers drained.
 */
export const PARTITIONS = 16;

// The package's own `nanos` and connection type live behind a subpath export that this
// repository's CommonJS type resolution (node10) cannot see; both are this simple.
type NatsConnection = Awaited<ReturnType<typeof connect>>;
const nanos = (ms: number) => ms * 1_000_000;

export interface NatsTransportSettings {
  /** nats://host:port, comma-separated for a cluster. */
  servers: string;
  /** The connecting service, for the server's connection list. */
  name: string;
  logger: Logger;
  /** How long JetStream waits for an ack before it delivers an event again. */
  ackWaitMs?: number;
  /** How long a duplicate publish (same event id) is recognised. */
  duplicateWindowMs?: number;
  /** Partitions per producer (PARTITIONS unless a bench compares); producers and consumers must agree. */
  partitions?: number;
}

/** The partition of an aggregate (the CloudEvents subject, `order/<id>`): the same for all its events. */
export function partitionOf(subject: string, partitions = PARTITIONS): number {
  return createHash('sha1').update(subject).digest().readUInt32BE(0) % partitions;
}


export class NatsTransport implements EventTransport {
  readonly kind = 'nats';

  private constructor(
    private readonly connection: NatsConnection,
    private readonly client: JetStreamClient,
    private readonly manager: JetStreamManager,
    private readonly settings: NatsTransportSettings,
  ) {}

  /** Connects (reconnecting for ever after) and makes sure the stream exists. */
  static async connect(settings: NatsTransportSettings): Promise<NatsTransport> {
    const connection = await connect({ servers: settings.servers.split(','), name: settings.name, reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
    const manager = await jetstreamManager(connection);
    const stream = { name: EVENTS_STREAM, subjects: ['events.>'], storage: StorageType.File, duplicate_window: nanos(settings.duplicateWindowMs ?? 10 * 60_000) };
    try {
      await manager.streams.info(EVENTS_STREAM);
    } catch {
      await manager.streams.add(stream);
    }
    return new NatsTransport(connection, jetstream(connection), manager, settings);
  }

  async publish(events: readonly PlatformEvent[]): Promise<void> {
    // Sent in order on one connection, so stored in order; each ack says it is on disk.
    const partitions = this.settings.partitions ?? PARTITIONS;
    const subjectOf = (event: PlatformEvent) => `events.${event.source.replace(/^\//, '')}.p${partitionOf(event.subject ?? '', partitions)}.${event.type}`;
    await Promise.all(events.map((event) => this.client.publish(subjectOf(event), JSON.stringify(event.toJSON()), { msgID: event.id, timeout: 10_000 })));
  }

  async consume(subscription: Subscription, handle: (delivery: Delivery) => Promise<void>): Promise<Consumption> {
    const partitions = Array.from({ length: this.settings.partitions ?? PARTITIONS }, (_, partition) => partition);
    const loops = await Promise.all(subscription.sources.flatMap((source) => partitions.map((partition) => this.follow(subscription.consumer, source, partition, handle))));
    return {
      stop: async () => {
        await Promise.all(loops.map((loop) => loop.stop()));
      },
    };
  }

  async pending(consumer: string, source: string): Promise<number> {
    const partitions = Array.from({ length: this.settings.partitions ?? PARTITIONS }, (_, partition) => partition);
    const counts = await Promise.all(
      partitions.map(async (partition) => {
        const info = await this.manager.consumers.info(EVENTS_STREAM, `${consumer}-from-${source}-p${partition}`).catch(() => undefined);
        return info ? info.num_pending + info.num_ack_pending : 0;
      }),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  }

  async close(): Promise<void> {
    await this.connection.drain().catch(() => undefined);
  }

  private async follow(consumer: string, source: string, partition: number, handle: (delivery: Delivery) => Promise<void>): Promise<Consumption> {
    const durable = `${consumer}-from-${source}-p${partition}`;
    const ackWaitMs = this.settings.ackWaitMs ?? 30_000;
    try {
      await this.manager.consumers.info(EVENTS_STREAM, durable);
    } catch {
      await this.manager.consumers.add(EVENTS_STREAM, {
        durable_name: durable,
        filter_subject: `events.${source}.p${partition}.>`,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(ackWaitMs),
        max_ack_pending: 1,
      });
    }
    const messages = await (await this.client.consumers.get(EVENTS_STREAM, durable)).consume({ max_messages: 1 });
    const done = (async () => {
      for await (const message of messages) {
        try {
          await handle({ event: message.json<Record<string, unknown>>(), attempt: message.info.deliveryCount });
          // Not waiting for the server's confirmation: an ack lost to a broken connection means a redelivery, which consumers drop.
          message.ack();
        } catch (error) {
          this.settings.logger.warn({ err: error, source, partition, redelivery: message.info.deliveryCount }, 'event not consumed; JetStream delivers it again');
          message.nak(Math.min(100 * 2 ** message.info.deliveryCount, 5_000));
        }
      }
    })();
    return {
      stop: async () => {
        messages.stop();
        await done;
      },
    };
  }
}

/** NATS JetStream when `natsUrl` is set, the embedded transport otherwise. */
export async function connectNatsIfConfigured(natsUrl: string | undefined, settings: Omit<NatsTransportSettings, 'servers'>): Promise<NatsTransport | undefined> {
  return natsUrl ? NatsTransport.connect({ ...settings, servers: natsUrl }) : undefined;
}
