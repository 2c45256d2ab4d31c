// The broker transport: NATS JetStream, when NATS_URL is set. One stream, EVENTS, on file
// storage, subjects `events.<producing service>.<event type>`; a publish counts once JetStream
// acknowledged it (stored), and its event id is the message id, so a batch the relay publishes
// again after a crash is dropped as a duplicate within the stream's window. Each consumer has a
// durable consumer per producing service with explicit acks and one message in flight at a time,
// so an aggregate's events are handled in stream order even across redeliveries.
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { Logger } from '@platform/service-kit';
import type { PlatformEvent } from './envelope';
import type { Consumption, Delivery, EventTransport, Subscription } from './transport';

export const EVENTS_STREAM = 'EVENTS';

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
}

const subjectOf = (event: PlatformEvent) => `events.${event.source.replace(/^\//, '')}.${event.type}`;

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
    await Promise.all(events.map((event) => this.client.publish(subjectOf(event), JSON.stringify(event.toJSON()), { msgID: event.id, timeout: 10_000 })));
  }

  async consume(subscription: Subscription, handle: (delivery: Delivery) => Promise<void>): Promise<Consumption> {
    const loops = await Promise.all(subscription.sources.map((source) => this.follow(subscription.consumer, source, handle)));
    return {
      stop: async () => {
        await Promise.all(loops.map((loop) => loop.stop()));
      },
    };
  }

  async close(): Promise<void> {
    await this.connection.drain().catch(() => undefined);
  }

  private async follow(consumer: string, source: string, handle: (delivery: Delivery) => Promise<void>): Promise<Consumption> {
    const durable = `${consumer}-from-${source}`;
    const ackWaitMs = this.settings.ackWaitMs ?? 30_000;
    try {
      await this.manager.consumers.info(EVENTS_STREAM, durable);
    } catch {
      await this.manager.consumers.add(EVENTS_STREAM, {
        durable_name: durable,
        filter_subject: `events.${source}.>`,
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
          this.settings.logger.warn({ err: error, source, redelivery: message.info.deliveryCount }, 'event not consumed; JetStream delivers it again');
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
