// Whether rate limits may ask Redis right now. Closed: every call goes to Redis (and gives up
// after the command timeout). The first failure opens it: calls stop asking Redis at once and are
// counted in this replica's memory, while a background probe (the half-open state: one PING at a
// time, every probe interval) waits for Redis to answer again and then closes it. A hung Redis
// (frozen process, lost packets) thus costs the calls in flight at most one command timeout,
// and every later call nothing.
import type { Redis } from 'ioredis';

export type Store = 'redis' | 'memory';

export interface RedisCircuitOptions {
  /** Between two probes while open. */
  probeIntervalMs: number;
  /** Called on each switch, with the failure that opened the circuit. */
  onSwitch(to: Store, cause?: Error): void;
}

export class RedisCircuit {
  private isOpen = false;
  private probe?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisCircuitOptions,
  ) {}

  /** The store calls are counted in now. */
  get store(): Store {
    return this.isOpen ? 'memory' : 'redis';
  }

  /** A Redis command failed (not a refusal: an error, a timeout): stop asking Redis. */
  failed(cause: Error): void {
    if (this.isOpen || this.stopped) return;
    this.isOpen = true;
    this.options.onSwitch('memory', cause);
    this.scheduleProbe();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.probe);
  }

  private scheduleProbe(): void {
    if (this.stopped) return;
    this.probe = setTimeout(() => void this.tryRedis(), this.options.probeIntervalMs);
    this.probe.unref();
  }

  private async tryRedis(): Promise<void> {
    try {
      await this.redis.ping(); // bounded by the client's command timeout
    } catch {
      this.scheduleProbe();
      return;
    }
    if (this.stopped) return;
    this.isOpen = false;
    this.options.onSwitch('redis');
  }
}
