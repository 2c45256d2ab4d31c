// What the relay and the consumers need of a transport. Two implement it: NATS JetStream when a
// broker is configured, and the embedded one (consumers read each producer's published log over
// HTTP) when none is. Everything above this interface is the same code for both.
import type { PlatformEvent } from './envelope';

/** A consumer's delivery: the event as JSON (CloudEvents structured mode) and where it stands. */
export interface Delivery {
  event: Record<string, unknown>;
  /** 1 on the first delivery; more when the transport redelivers. */
  attempt: number;
}

export interface Subscription {
  /** The consuming service's name: the durable consumer's name and the key of its cursors. */
  consumer: string;
  /** The producing services (`users-service`) whose events it reads. */
  sources: readonly string[];
  /** The event types it handles; others are passed over (acknowledged unread). */
  types: readonly string[];
}

export interface Consumption {
  stop(): Promise<void>;
}

export interface EventTransport {
  readonly kind: 'nats' | 'embedded';
  /** Resolves once the transport has durably taken every event (acknowledged); rejects otherwise. */
  publish(events: readonly PlatformEvent[]): Promise<void>;
  /**
   * Hands `subscription`'s events to `handle`, each aggregate's in its order, one at a time (the
   * events of different aggregates may be handled side by side). An event counts as consumed
   * when `handle` resolves; when it rejects, the event comes again. Resolves once it is reading
   * (over NATS: its durable consumers exist), or has tried to and goes on trying.
   */
  consume(subscription: Subscription, handle: (delivery: Delivery) => Promise<void>): Promise<Consumption>;
  /** Events of `source` stored but not yet acknowledged by `consumer` (the broker knows; the embedded transport does not say). */
  pending?(consumer: string, source: string): Promise<number>;
  close(): Promise<void>;
}
