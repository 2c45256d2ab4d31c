// Call-rate limits. Every call is counted in this replica's memory (memory-windows.ts) and,
// while Redis answers, in Redis too (shared by every gateway replica, taken in leases so that a
// busy caller's calls do not each wait for a round trip: redis-leases.ts); the stricter of the
// two counts decides. Redis commands give up after a few tens of milliseconds, and the first
// failure opens a circuit (redis-circuit.ts): calls stop asking Redis at once until a background
// probe sees it answer again, so a hung or dead Redis never holds a request up. In memory only
// when no Redis is configured. Every answer carries the IETF draft RateLimit headers.
//
// Why memory counts every call, and why the stricter count wins: when Redis comes back it has
// missed every call made during the outage, or lost every count (restarted without persistence).
// Its counts alone would hand every caller a fresh budget. This replica's memory has seen all the
// calls it served, before and during the outage, so until that window ends the stricter of the
// two applies. With several replicas each remembers only its own calls: in the window an outage
// touched, a caller may get what its other replicas served during the outage on top of the
// limit, never a whole new budget. In normal operation Redis, which counts every replica, is the
// stricter one, and the memory count only costs a map entry per caller and window.
//
// A call one count refuses is given back to the counts that allowed it. After an outage the two
// counts' windows no longer start together; a caller asking without pause would otherwise spend
// each fresh window on calls the other count still refuses, and be starved (1 answer in 6 s where
// its policy allows 3 every 2 s) instead of getting its budget back when a window ends.
import { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';
import { ApiError } from '@platform/errors';
import type { Logger } from '@platform/service-kit';
import { MemoryWindows } from './memory-windows';
import { RedisCircuit, type Store } from './redis-circuit';
import type { CountAnswer } from './count-answer';
import { RedisLeases } from './redis-leases';

/** A limit's size (policies.ts): `points` per `windowS` seconds, per key. */
export interface LimitSize {
  points: number;
  windowS: number;
}

export interface Decision {
  /** `RateLimit-Policy` and `RateLimit` header values (the IETF draft's quota policy is one limit). */
  headers: [string, string][];
}

function headersOf(name: string, size: LimitSize, remaining: number, resetMs: number): [string, string][] {
  return [
    ['RateLimit-Policy', `"${name}";q=${size.points};w=${size.windowS}`],
    ['RateLimit', `"${name}";r=${Math.max(0, remaining)};t=${Math.max(0, Math.ceil(resetMs / 1000))}`],
  ];
}

export function connectRedis(url: string, options: { commandTimeoutMs: number }, logger: Logger): Redis {
  const redis = new Redis(url, {
    // Fail fast while disconnected: calls are counted in memory instead of queued.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 1_000,
    // A frozen Redis keeps its connection open and never answers: give up on each command.
    commandTimeout: options.commandTimeoutMs,
    // Keep trying to come back, at most every 2 s.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // Limiter calls from concurrent requests leave in one write per event-loop tick.
    enableAutoPipelining: true,
  });
  // Repeats on every reconnection attempt; the rate limits log the outage once, on the switch.
  redis.on('error', (error: Error) => logger.debug({ err: error.message }, 'Redis connection error'));
  return redis;
}

/** Waits (bounded) for the first connection, so a new replica starts on the shared counts. */
export async function redisReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === 'ready') return true;
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export interface RateLimitsOptions {
  /** The shared store; unset: counts live in this process only. */
  redis?: Redis;
  logger: Logger;
  /** Where `gateway_rate_limit_store` and its switch count are reported. */
  registry: Registry;
  /** While Redis is out, how often to see whether it answers again. */
  probeIntervalMs?: number;
}

interface Counters {
  memory: MemoryWindows;
  redis?: RedisLeases;
}

export class RateLimits {
  private readonly counters = new Map<string, Counters>();
  private readonly circuit?: RedisCircuit;
  private readonly decisions: Counter<'policy' | 'decision'>;

  constructor(
    /** Each limit's size, by its name (limitsOf). */
    private readonly limits: Record<string, LimitSize>,
    options: RateLimitsOptions,
  ) {
    const store = new Gauge({ name: 'gateway_rate_limit_store', help: "Where rate limits are counted now: 1 for Redis (shared) or this replica's memory", labelNames: ['store'], registers: [options.registry] });
    const switches = new Counter({ name: 'gateway_rate_limit_store_switches_total', help: 'Switches of the rate-limit store, by the store switched to', labelNames: ['to'], registers: [options.registry] });
    this.decisions = new Counter({ name: 'gateway_rate_limit_decisions_total', help: 'Rate-limit decisions by limit (the label keeps its first name, policy): allowed, or limited (429)', labelNames: ['policy', 'decision'], registers: [options.registry] });
    const show = (current: Store) => {
      store.set({ store: 'redis' }, current === 'redis' ? 1 : 0);
      store.set({ store: 'memory' }, current === 'memory' ? 1 : 0);
    };
    if (options.redis) {
      this.circuit = new RedisCircuit(options.redis, {
        probeIntervalMs: options.probeIntervalMs ?? 1_000,
        onSwitch: (to, cause) => {
          switches.inc({ to });
          show(to);
          // Leases held when Redis went out may name counts it has lost since, or windows that ended.
          for (const counters of this.counters.values()) counters.redis?.clear();
          if (to === 'memory') options.logger.warn({ err: cause?.message }, "Redis unavailable: rate limits are counted in this replica's memory until it answers again");
          else options.logger.info('Redis is back: rate limits are shared again');
        },
      });
    }
    show(this.circuit?.store ?? 'memory');
    // The client's command timeout also bounds each call from its start: with auto-pipelining a
    // command waits, unsent and without its timer running, while the pipeline before it is still
    // out, so on a hung Redis the calls behind the first would wait two timeouts.
    const timeoutMs = options.redis?.options.commandTimeout ?? 50;
    for (const [name, size] of Object.entries(limits)) {
      const prefix = `rl:${name}`;
      this.counters.set(name, {
        memory: new MemoryWindows(size.points, size.windowS),
        redis: options.redis && new RedisLeases(options.redis, prefix, size, timeoutMs),
      });
    }
  }

  /** Takes `points` of the limit `limitName` for `key`; throws 429 RATE_LIMITED (with the headers) when they are not left. */
  async consume(limitName: string, key: string, points = 1): Promise<Decision> {
    const size = this.limits[limitName];
    const counters = this.counters.get(limitName);
    if (!counters) throw new Error(`no rate limit named "${limitName}" is sized (limitsOf)`);
    const inMemory = counters.memory.take(key, points);
    // Only a call Redis counts waits: with memory alone (no Redis, or its circuit open) nothing is awaited.
    const shared = counters.redis && this.circuit?.store === 'redis' ? await this.sharedOutcome(counters.redis, key, points) : undefined;
    const outcomes = shared ? [inMemory, shared] : [inMemory];
    const refusals = outcomes.filter((outcome) => !outcome.allowed);
    this.decisions.inc({ policy: limitName, decision: refusals.length ? 'limited' : 'allowed' });
    if (refusals.length) {
      // Not served: the count that allowed it does not keep the points (see the file's comment).
      if (inMemory.allowed) counters.memory.giveBack(key, points);
      if (shared?.allowed) counters.redis?.giveBack(key, points);
      const msBeforeNext = Math.max(...refusals.map((refusal) => refusal.msBeforeNext));
      const headers = headersOf(limitName, size, 0, msBeforeNext);
      throw new ApiError('RATE_LIMITED', `Too many requests; retry in ${Math.ceil(msBeforeNext / 1000)} s.`, {
        headers: { ...Object.fromEntries(headers), 'Retry-After': String(Math.max(1, Math.ceil(msBeforeNext / 1000))) },
      });
    }
    const strictest = outcomes.reduce((stricter, outcome) => (outcome.remaining < stricter.remaining ? outcome : stricter));
    return { headers: headersOf(limitName, size, strictest.remaining, strictest.msBeforeNext) };
  }

  /** Stops probing Redis (the process is stopping). */
  stop(): void {
    this.circuit?.stop();
    for (const counters of this.counters.values()) {
      counters.memory.stop();
      counters.redis?.stop();
    }
  }

  /** Redis's count, unless Redis is out; a failure opens the circuit and leaves memory to decide. */
  private async sharedOutcome(leases: RedisLeases, key: string, points: number): Promise<CountAnswer | undefined> {
    try {
      return await leases.take(key, points);
    } catch (error) {
      this.circuit?.failed(error instanceof Error ? error : new Error(String(error)));
      return undefined;
    }
  }
}
