// The settings every service with events reads (through service-kit's loadConfig).
import { z } from '@platform/validation';

export const eventsConfigShape = {
  /** A NATS server with JetStream (nats://host:4222, comma-separated for a cluster); unset: the embedded transport. */
  NATS_URL: z.string().optional(),
  /** This service's user on the broker (its name; prod's nats.conf lets it publish only its own events); unset: no authentication (a local nats-server). */
  NATS_USER: z.string().min(1).optional(),
  /** NATS_USER's password, from Secret platform-nats in prod (docs/operations.md). */
  NATS_PASSWORD: z.string().min(1).optional(),
  /**
   * `apply`: the service creates the EVENTS stream and brings it to the NATS_STREAM_* settings at
   * start (a local broker, where every connection may). `check`: it only reads the stream, waits
   * for one that does not exist yet and warns where its settings differ: prod, where the services'
   * broker users may not create or change it, and the events-stream Job applies them (`main.js events-stream`).
   */
  NATS_STREAM_SETUP: z.enum(['apply', 'check']).default('apply'),
  /** Copies JetStream keeps of the stream: 3 on the prod overlay's three-server cluster, 1 on one server. */
  NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
  /** How long the stream keeps an event (s; 7 days): a consumer down longer misses the older ones (libs/events/src/nats-transport.ts). */
  NATS_STREAM_MAX_AGE_S: z.coerce.number().int().min(3_600).default(7 * 24 * 3_600),
  /** Most bytes the stream keeps (1 GiB), the oldest events going first; well below the servers' max_file_store. */
  NATS_STREAM_MAX_BYTES: z.coerce.number().int().min(1024 ** 2).default(1024 ** 3),
  /** How often the relay and the embedded transport's readers look without being woken (ms). */
  EVENTS_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /** The longest one event handler may run (ms); past it the delivery counts as failed, and after its attempts the event is parked. */
  EVENTS_HANDLER_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(25_000),
};

export type EventsConfig = z.output<z.ZodObject<typeof eventsConfigShape>>;

/** The events settings alone, from `env`: all `main.js events-stream` reads, so its Job needs none of the service's other settings or secrets. */
export function eventsConfigFrom(env: NodeJS.ProcessEnv): EventsConfig {
  return z.object(eventsConfigShape).parse(env);
}
