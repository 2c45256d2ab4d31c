// Call-rate limits with rate-limiter-flexible: on Redis, shared by every gateway replica, with
// an in-memory insurance limiter while Redis is down (logged once per outage); in memory only
// when no Redis is configured. Every answer carries the IETF draft RateLimit headers.
import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { ApiError } from '@platform/errors';
import type { Logger } from '@platform/service-kit';
import type { RateLimitPolicyName } from '../routing/route-table';

export interface Policy {
  points: number;
  windowS: number;
}

export interface Decision {
  /** `RateLimit-Policy` and `RateLimit` header values. */
  headers: [string, string][];
}

function headersOf(name: string, policy: Policy, remaining: number, resetMs: number): [string, string][] {
  return [
    ['RateLimit-Policy', `"${name}";q=${policy.points};w=${policy.windowS}`],
    ['RateLimit', `"${name}";r=${Math.max(0, remaining)};t=${Math.max(0, Math.ceil(resetMs / 1000))}`],
  ];
}

export function connectRedis(url: string, logger: Logger): Redis {
  const redis = new Redis(url, {
    // Fail fast while disconnected: the insurance limiter answers instead of queued commands.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 1_000,
    // Keep trying to come back, at most every 2 s.
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // Limiter calls from concurrent requests leave in one write per event-loop tick.
    enableAutoPipelining: true,
  });
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn({ err: error.message }, 'Redis unavailable: rate limits fall back to this replica\'s memory until it returns');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('Redis is back: rate limits are shared again');
  });
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

export class RateLimits {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    private readonly policies: Record<RateLimitPolicyName | 'tokens-ip', Policy>,
    redis?: Redis,
  ) {
    for (const [name, policy] of Object.entries(policies)) {
      const memory = new RateLimiterMemory({ points: policy.points, duration: policy.windowS, keyPrefix: `rl:${name}` });
      this.limiters.set(
        name,
        redis
          ? new RateLimiterRedis({ storeClient: redis, points: policy.points, duration: policy.windowS, keyPrefix: `rl:${name}`, rejectIfRedisNotReady: true, insuranceLimiter: memory })
          : memory,
      );
    }
  }

  /** Takes one point of `policy` for `key`; throws 429 RATE_LIMITED (with the headers) when none is left. */
  async consume(policyName: RateLimitPolicyName | 'tokens-ip', key: string): Promise<Decision> {
    const policy = this.policies[policyName];
    const limiter = this.limiters.get(policyName)!;
    try {
      const result = await limiter.consume(key);
      return { headers: headersOf(policyName, policy, result.remainingPoints, result.msBeforeNext) };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const headers = headersOf(policyName, policy, 0, rejection.msBeforeNext);
      throw new ApiError('RATE_LIMITED', `Too many requests; retry in ${Math.ceil(rejection.msBeforeNext / 1000)} s.`, {
        headers: { ...Object.fromEntries(headers), 'Retry-After': String(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000))) },
      });
    }
  }
}
