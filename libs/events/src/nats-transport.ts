// The broker transport: NATS JetStream, when NATS_URL is set. One stream, EVENTS, on file
// storage; a publish counts once JetStream acknowledged it (stored), and its event id is the
// message id, so a batch the relay publishes again after a crash is dropped as a duplicate within
// the stream's window. Each producer's events are spread over PARTITIONS subjects by aggregate
// (`events.<producing service>.p<n>.<event type>`, n from a hash of the CloudEvents subject), and
// a consumer has one durable consumer per producer and partition, with explicit acks and one
// message in flight (pulled one by one): an aggregate's events stay in one partition, so they are
// handled in stream order even across redeliveries, while the partitions are handled side by side.
import { createHash } from 'node:crypto';
import { AckPolicy, DeliverPolicy, DiscardPolicy, JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { Logger } from '@platform/service-kit';
import type { EventsConfig } from './config';
import type { PlatformEvent } from './envelope';
import type { Consumption, Delivery, EventTransport, Subscription } from './transport';

export const EVENTS_STREAM = 'EVENTS';
/**
 * Partitions per producer. Producers and consumers must agree: changing it moves aggregates to
 * other partitions, so it is done with the relays stopped and the consumers drained.
 */
export const PARTITIONS = 16;
/** How long one pull waits for an event before the next pull (unless settings say otherwise); a broken pull shows within it. */
const PULL_EXPIRES_MS = 5_000;

// The package's own `nanos` and connection type live behind a subpath export that this
// repository's CommonJS type resolution (node10) cannot see; both are this simple.
type NatsConnection = Awaited<ReturnType<typeof connect>>;
const nanos = (ms: number) => ms * 1_000_000;

export interface NatsTransportSettings {
  /** nats://host:port, comma-separated for a cluster. */
  servers: string;
  /** The connecting service, for the server's connection list. */
  name: string;
  /** The broker user and password (prod: one user per service, allowed to publish only its own events); unset: no authentication. */
  user?: string;
  pass?: string;
  logger: Logger;
  /** How long JetStream waits for an ack before it delivers an event again. */
  ackWaitMs?: number;
  /** How long a duplicate publish (same event id) is recognised. */
  duplicateWindowMs?: number;
  /** Copies of the stream JetStream keeps (3 on a three-server cluster, 1 on a single server). */
  replicas?: number;
  /** The stream's bounds (see `applyStream`): the oldest events go past either. */
  maxAgeMs?: number;
  maxBytes?: number;
  /** How long a publish waits for JetStream's acknowledgement. */
  publishTimeoutMs?: number;
  /** How long to wait for the broker at start (it may be starting too) before giving up. */
  connectWithinMs?: number;
  /** Partitions per producer (PARTITIONS unless a bench compares); producers and consumers must agree. */
  partitions?: number;
  /** `apply` (default): create the stream or bring it to these settings (`applyStream`); `check`: only read it (`checkStream`). */
  stream?: 'apply' | 'check';
  /** How long one pull waits for an event (PULL_EXPIRES_MS); one unanswered twice as long is given up (a test of that shortens it). */
  pullExpiresMs?: number;
}

/** The durable consumer through which `consumer` reads `source`'s partition `partition`: one name token (no dots). */
export function durableNameOf(consumer: string, source: string, partition: number): string {
  return `${consumer}-from-${source}-p${partition}`;
}

/** The subjects of `source`'s events in partition `partition`: a durable consumer's filter. */
export function partitionFilterOf(source: string, partition: number): string {
  return `events.${source}.p${partition}.>`;
}

/**
 * The subject prefix of `user`'s reply inboxes (`_INBOX_<user>.…`), the connection's `inboxPrefix`:
 * every reply it waits for (JetStream API answers, publish acks, the deliveries of its pull
 * requests) comes to a subject under it. With the shared `_INBOX.` every service user would have
 * to be allowed `_INBOX.>`, and so could subscribe to another service's inboxes and read its events
 * and API answers; prod's nats.conf lets each user subscribe only under its own prefix (nats-permissions.ts).
 */
export function inboxPrefixOf(user: string): string {
  return `_INBOX_${user}`;
}

/** The partition of an aggregate (the CloudEvents subject, `order/<id>`): the same for all its events. */
export function partitionOf(subject: string, partitions = PARTITIONS): number {
  return createHash('sha1').update(subject).digest().readUInt32BE(0) % partitions;
}

export class NatsTransport implements EventTransport {
  readonly kind = 'nats';
  /** False from a lost connection until the client is connected again. */
  private connected = true;

  private constructor(
    private readonly connection: NatsConnection,
    private readonly client: JetStreamClient,
    private readonly manager: JetStreamManager,
    private readonly settings: NatsTransportSettings,
  ) {
    void (async () => {
      for await (const status of connection.status()) {
        if (status.type === 'disconnect') this.connected = false;
        else if (status.type === 'reconnect') this.connected = true;
        if (status.type === 'disconnect' || status.type === 'reconnect') settings.logger.info({ servers: settings.servers }, `NATS ${status.type}ed`);
      }
    })();
  }

  /**
   * Connects (reconnecting for ever after) and applies the stream's settings, or with `stream:
   * 'check'` makes sure the stream exists. A broker that is not up yet (a deployment starting
   * everything at once, a broker restarting), or a stream not yet created, is waited for,
   * `connectWithinMs` at most (60 s), instead of failing the service's start.
   */
  static async connect(settings: NatsTransportSettings): Promise<NatsTransport> {
    const giveUpAt = Date.now() + (settings.connectWithinMs ?? 60_000);
    for (let attempt = 1; ; attempt++) {
      let connection: NatsConnection | undefined;
      try {
        // The broker user's inbox prefix (the service's name without authentication): prod allows it only its own.
        const inboxPrefix = inboxPrefixOf(settings.user ?? settings.name);
        connection = await connect({ servers: settings.servers.split(','), name: settings.name, user: settings.user, pass: settings.pass, inboxPrefix, reconnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 500, timeout: 5_000 });
        const manager = await jetstreamManager(connection, { timeout: 5_000 });
        await (settings.stream === 'check' ? checkStream : applyStream)(manager, settings);
        return new NatsTransport(connection, jetstream(connection), manager, settings);
      } catch (error) {
        await connection?.close().catch(() => undefined);
        if (Date.now() >= giveUpAt) throw error;
        if (attempt === 1 || attempt % 10 === 0) settings.logger.warn({ err: error, servers: settings.servers, attempt }, 'NATS JetStream not reachable yet; waiting for it');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  async publish(events: readonly PlatformEvent[]): Promise<void> {
    // Without a connection the client would buffer the batch and the acks could never come
    // (the broker that was to answer is gone): the relay would wait out the whole timeout with
    // its transaction open. Refused at once instead; the relay tries again on its next pass.
    if (!this.connected) throw new Error('not connected to NATS; the relay publishes this batch again');
    const partitions = this.settings.partitions ?? PARTITIONS;
    const subjectOf = (event: PlatformEvent) => `events.${event.source.replace(/^\//, '')}.p${partitionOf(event.subject ?? '', partitions)}.${event.type}`;
    // Sent in order on one connection, so stored in order; each ack says it is on disk.
    await Promise.all(events.map((event) => this.client.publish(subjectOf(event), JSON.stringify(event.toJSON()), { msgID: event.id, timeout: this.settings.publishTimeoutMs ?? 5_000 })));
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
        const info = await this.manager.consumers.info(EVENTS_STREAM, durableNameOf(consumer, source, partition)).catch(() => undefined);
        return info ? info.num_pending + info.num_ack_pending : 0;
      }),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  }
  async close(): Promise<void> {
    await this.connection.drain().catch(() => undefined);
  }

  private async follow(consumer: string, source: string, partition: number, handle: (delivery: Delivery) => Promise<void>): Promise<Consumption> {
    const durable = durableNameOf(consumer, source, partition);
    const ackWaitMs = this.settings.ackWaitMs ?? 30_000;
    const pullExpiresMs = this.settings.pullExpiresMs ?? PULL_EXPIRES_MS;
    const ensureDurable = async () => {
      try {
        await this.manager.consumers.info(EVENTS_STREAM, durable);
      } catch (error) {
        if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound)) throw error;
        await this.manager.consumers.add(EVENTS_STREAM, {
          durable_name: durable,
          filter_subject: partitionFilterOf(source, partition),
          ack_policy: AckPolicy.Explicit,
          deliver_policy: DeliverPolicy.All,
          ack_wait: nanos(ackWaitMs),
          max_ack_pending: 1,
        });
      }
    };
    // One pull of one message at a time, each bounded, rather than the client's long-lived `consume`:
    // after a broker restart `consume` waits out a 30 s backoff per failed check, again at every
    // restart, and in the fault test consumers had not caught up 2 minutes after repeated broker
    // kills. A failed or expired pull here is simply followed by the next one; a broker that is
    // down when the consumer starts is waited for the same way.
    let stopping = false;
    // Settled once the first attempt to reach the durable consumer is over (found or made, or
    // failed): `consume` resolves then, so a caller (a service starting, a bench) does not begin
    // its work while the durables are still being made, which held the first events back.
    let firstAttemptOver: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (firstAttemptOver = resolve));
    let wakeStop: () => void = () => undefined;
    const stopped = new Promise<null>((resolve) => (wakeStop = () => resolve(null)));
    const pause = (ms: number) => Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, ms))]);
    const done = (async () => {
      let failures = 0;
      while (!stopping) {
        try {
          await ensureDurable();
          const consumer = await this.client.consumers.get(EVENTS_STREAM, durable);
          firstAttemptOver();
          while (!stopping) {
            // One message per pull, read from the pull's own iterator so that a pull given up on
            // can be stopped: left running, the client pulls again for it after a reconnect, the
            // server hands the partition's next message to that pull, nobody reads it, and the
            // partition (one message in flight) waits out the ack wait (30 s) at every broker restart.
            const messages = await consumer.fetch({ max_messages: 1, expires: pullExpiresMs });
            // Bounded by a timer of our own as well: a pull cut by a disconnect can be left
            // pending by the client for good (its heartbeat monitor stops on disconnect).
            let timer: NodeJS.Timeout | undefined;
            const abandoned = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('pull unanswered; pulling again')), pullExpiresMs * 2)));
            const first = (async () => {
              for await (const message of messages) return message;
              return null;
            })();
            first.catch(() => undefined); // a pull that fails after it was given up on is no one's concern
            const message = await Promise.race([stopped, first, abandoned]).finally(() => {
              clearTimeout(timer);
              messages.stop();
            });
            failures = 0;
            if (!message) continue; // nothing within the pull's time, or stopping
            try {
              await handle({ event: message.json<Record<string, unknown>>(), attempt: message.info.deliveryCount });
              // Not waiting for the server's confirmation: an ack lost to a broken connection means a redelivery, which consumers drop.
              message.ack();
            } catch (error) {
              this.settings.logger.warn({ err: error, source, partition, redelivery: message.info.deliveryCount }, 'event not consumed; JetStream delivers it again');
              message.nak(Math.min(100 * 2 ** message.info.deliveryCount, 5_000));
            }
          }
        } catch (error) {
          failures++;
          firstAttemptOver();
          if (failures === 1 || failures % 20 === 0) this.settings.logger.warn({ err: error, source, partition, failures }, 'pulling events from NATS failed; pulling again');
          await pause(Math.min(250 * failures, 2_000));
        }
      }
    })();
    await ready;
    return {
      stop: async () => {
        stopping = true;
        wakeStop();
        await done;
      },
    };
  }
}

/** How long the stream keeps an event (NATS_STREAM_MAX_AGE_S), and how much it keeps (NATS_STREAM_MAX_BYTES). */
export const DEFAULT_STREAM_MAX_AGE_MS = 7 * 24 * 3_600_000;
export const DEFAULT_STREAM_MAX_BYTES = 1024 ** 3;

/**
 * The stream's settings that this code owns. Bounded, because an unbounded stream grows until
 * the server's max_file_store is full, and then every publish fails and every relay stalls. What
 * the bounds cost: an event older than max_age, or pushed out by max_bytes, is gone for a durable
 * consumer that had not reached it yet (it resumes at the oldest event left). Consumers take
 * events within seconds, and an event they gave up on is parked with its body in the consumer's
 * own database (dead_letter_events), replayed from there, never from the stream; so the window
 * only has to outlast a consumer that is down or stuck: 7 days covers a long weekend, and
 * EventConsumerLagging/EventConsumerStalled page long before. At max_bytes the oldest events go
 * (discard old) rather than new publishes being refused: refusing them is the stall the bound is
 * there to prevent. max_bytes stays well below the server's max_file_store (8Gi per server in
 * the prod overlay, each holding a full copy), which also holds the consumers' state.
 */
function streamSettingsOf(settings: NatsTransportSettings) {
  return {
    num_replicas: settings.replicas ?? 1,
    max_age: nanos(settings.maxAgeMs ?? DEFAULT_STREAM_MAX_AGE_MS),
    max_bytes: settings.maxBytes ?? DEFAULT_STREAM_MAX_BYTES,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(settings.duplicateWindowMs ?? 10 * 60_000),
  };
}

/** The stream's settings that differ from `wanted`: what they are, and what they should be. */
function differingSettings(current: Record<string, unknown>, wanted: ReturnType<typeof streamSettingsOf>) {
  const differing = (Object.keys(wanted) as (keyof typeof wanted)[]).filter((key) => current[key] !== wanted[key]);
  return { differing, was: Object.fromEntries(differing.map((key) => [key, current[key]])), now: Object.fromEntries(differing.map((key) => [key, wanted[key]])) };
}

/**
 * For a user that may only read the stream (prod's services: changing its retention or subjects
 * is not theirs to do): the stream must exist, else this throws and `connect` waits for it; a
 * setting that differs from this service's NATS_STREAM_* is logged, never changed.
 */
async function checkStream(manager: JetStreamManager, settings: NatsTransportSettings): Promise<void> {
  let current;
  try {
    current = (await manager.streams.info(EVENTS_STREAM)).config;
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
    throw new Error(`the ${EVENTS_STREAM} stream does not exist yet: the events-stream Job creates it (main.js events-stream, docs/operations.md)`, { cause: error });
  }
  const { differing, was, now } = differingSettings(current as unknown as Record<string, unknown>, streamSettingsOf(settings));
  if (differing.length) settings.logger.warn({ stream: EVENTS_STREAM, is: was, wanted: now }, 'the stream differs from this service\'s NATS_STREAM_* settings; the events-stream Job applies them (docs/operations.md)');
}

/**
 * Creates the EVENTS stream unless it exists, and brings an existing one to these settings (a
 * stream created before the bounds, a changed NATS_STREAM_MAX_BYTES or replica count). A
 * replica count the servers refuse (more than there are) is left as it is, with a warning, and
 * the bounds applied anyway. Any other failure (a timeout) is the caller's to retry.
 */
async function applyStream(manager: JetStreamManager, settings: NatsTransportSettings): Promise<void> {
  const wanted = streamSettingsOf(settings);
  let current;
  try {
    current = (await manager.streams.info(EVENTS_STREAM)).config;
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
    await manager.streams.add({ name: EVENTS_STREAM, subjects: ['events.>'], storage: StorageType.File, ...wanted });
    settings.logger.info({ stream: EVENTS_STREAM, settings: wanted }, 'stream created');
    return;
  }
  const { differing, was, now } = differingSettings(current as unknown as Record<string, unknown>, wanted);
  if (!differing.length) return;
  try {
    await manager.streams.update(EVENTS_STREAM, { ...current, ...wanted });
  } catch (error) {
    if (!(error instanceof JetStreamApiError) || current.num_replicas === wanted.num_replicas) throw error;
    settings.logger.warn({ err: error, stream: EVENTS_STREAM, replicas: current.num_replicas, wantedReplicas: wanted.num_replicas }, 'the servers refuse this replica count; the stream keeps its own, and gets the other settings');
    await manager.streams.update(EVENTS_STREAM, { ...current, ...wanted, num_replicas: current.num_replicas });
  }
  settings.logger.info({ stream: EVENTS_STREAM, was, now }, 'stream settings updated');
}

/** NATS JetStream when NATS_URL is set (the stream as the events settings say), the embedded transport otherwise. */
export async function connectNatsIfConfigured(config: EventsConfig, settings: Omit<NatsTransportSettings, 'servers' | 'user' | 'pass' | 'replicas' | 'maxAgeMs' | 'maxBytes' | 'stream'>): Promise<NatsTransport | undefined> {
  if (!config.NATS_URL) return undefined;
  return NatsTransport.connect({ ...settings, servers: config.NATS_URL, user: config.NATS_USER, pass: config.NATS_PASSWORD, replicas: config.NATS_STREAM_REPLICAS, maxAgeMs: config.NATS_STREAM_MAX_AGE_S * 1_000, maxBytes: config.NATS_STREAM_MAX_BYTES, stream: config.NATS_STREAM_SETUP });
}

/**
 * `main.js events-stream` (users-service's entry point; prod's events-stream Job runs it on every
 * `kubectl apply`, deploy/k8s/overlays/prod/events-stream.yaml): creates the EVENTS stream or
 * brings it to `config`'s NATS_STREAM_* settings, whatever NATS_STREAM_SETUP says, then
 * disconnects. Run as a broker user allowed to (prod: `stream-admin`, natsStreamAdminPermissions),
 * never as a service's. Waits for a broker not up yet as long as a service does (a new cluster's
 * servers electing their JetStream leader); past that it throws, and the Job tries again.
 */
export async function applyEventsStream(config: EventsConfig, logger: Logger): Promise<void> {
  if (!config.NATS_URL) throw new Error('NATS_URL is not set: without a broker there is no stream to apply');
  const transport = await connectNatsIfConfigured({ ...config, NATS_STREAM_SETUP: 'apply' }, { name: 'events-stream', logger });
  await transport?.close();
}
