// One limit's shared count in Redis, asked for points in leases instead of once per call.
//
// Redis holds, per key, the points every replica has taken in the current window (the key
// `rl:<limit>:<key>`, its value the points, expiring with the window: the layout
// rate-limiter-flexible's RateLimiterRedis used, so replicas of either version share counts). A
// call that finds no points left in its replica's lease asks Redis, in one script, for its own
// points and, for a caller this replica already serves often, some ahead: the lease. Later calls
// of that caller spend the lease in memory, without a round trip, until it is gone or the window
// ends.
//
// Why this holds one budget across replicas: a lease is taken out of Redis's count before any of
// it is spent, so all replicas together never serve more than the limit in a window. The price is
// the other way round: points one replica holds in its lease are missing to the others, so a
// caller spread over several replicas may be refused before it reaches the limit, by at most what
// the other replicas hold unspent. That is bounded by the lease rule:
// - none before a replica has served the caller LEASE_AFTER calls in the window: callers making a
//   few calls are counted call by call, exactly as before;
// - then half of what this replica served it in the window, at most MAX_LEASE points, and at most
//   a sixteenth of what the window has left (LEASE_SHARE), so leases shrink to nothing as the
//   budget runs out, and the last calls of a window are again counted one by one.
// With R replicas a caller is thus refused at worst (R - 1)/16 of its limit early, never later.
// A refusal is remembered until the window ends (Redis's count only grows within a window), so a
// caller hammering past its limit costs Redis nothing more.
import type { Redis } from 'ioredis';
import type { CountAnswer } from './count-answer';

/** Calls a replica serves a caller in a window before it leases points ahead for it. */
export const LEASE_AFTER = 8;
/** The most points one lease takes ahead. */
export const MAX_LEASE = 256;
/** A lease takes at most 1/LEASE_SHARE of what the window has left. */
export const LEASE_SHARE = 16;

// KEYS[1] the count; ARGV: points needed now, points wanted ahead, window (s), limit.
// Returns the points granted (0: refused, nothing taken), the count after, its time to live (ms).
const LEASE_SCRIPT = `
redis.call('set', KEYS[1], 0, 'EX', ARGV[3], 'NX')
local used = tonumber(redis.call('get', KEYS[1]))
local need = tonumber(ARGV[1])
local limit = tonumber(ARGV[4])
local granted = 0
if used + need <= limit then
  granted = need + math.min(tonumber(ARGV[2]), math.floor((limit - used - need) / ${LEASE_SHARE}))
  used = redis.call('incrby', KEYS[1], granted)
end
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('expire', KEYS[1], ARGV[3])
  ttl = 1000 * ARGV[3]
end
return {granted, used, ttl}
`;

type LeaseCommand = (key: string, need: number, ahead: number, windowS: number, limit: number) => Promise<[number, number, number]>;

interface Lease {
  /** Points taken from Redis and not spent yet. */
  left: number;
  /** Redis's count when this replica last asked: every replica's points, this lease's among them. */
  used: number;
  /** Calls of this caller this replica served in the window. */
  served: number;
  /** When the window ends, by this replica's clock (never later than Redis's). */
  endsAt: number;
  /** A call of at least this many points is refused until the window ends. */
  refusedFrom: number;
  /** A request for points under way: other calls wait for it instead of asking too. */
  asking?: Promise<void>;
}

export class RedisLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly ask: LeaseCommand;
  private readonly sweep: NodeJS.Timeout;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly size: { points: number; windowS: number },
    /** Each request to Redis gives up after this long (see rate-limits.ts). */
    private readonly timeoutMs: number,
  ) {
    if (!('leasePoints' in redis)) redis.defineCommand('leasePoints', { numberOfKeys: 1, lua: LEASE_SCRIPT });
    const command = (redis as unknown as { leasePoints: LeaseCommand }).leasePoints.bind(redis);
    this.ask = (...args) => command(...args).then((reply) => reply.map(Number) as [number, number, number]);
    // Ended windows' leases are forgotten.
    this.sweep = setInterval(() => this.forgetEnded(), Math.max(1_000, size.windowS * 1_000));
    this.sweep.unref();
  }

  /** Takes `points` for `key`: from this replica's lease, else from Redis. Throws when Redis fails or is too slow. */
  async take(key: string, points: number): Promise<CountAnswer> {
    for (;;) {
      const lease = this.current(key);
      if (points >= lease.refusedFrom) return { allowed: false, remaining: 0, msBeforeNext: lease.endsAt - Date.now() };
      if (lease.left >= points) {
        lease.left -= points;
        lease.served += 1;
        return { allowed: true, remaining: this.size.points - lease.used + lease.left, msBeforeNext: lease.endsAt - Date.now() };
      }
      if (!lease.asking) return this.askRedis(key, lease, points);
      await lease.asking;
    }
  }

  /** Gives back points a call took but was not served with (another count refused it): they stay in this replica's lease. */
  giveBack(key: string, points: number): void {
    const lease = this.leases.get(key);
    if (!lease || lease.endsAt <= Date.now()) return;
    lease.left += points;
    lease.served = Math.max(0, lease.served - 1);
  }

  /** Forgets every lease: Redis was out, and its counts may have been lost or have moved on. */
  clear(): void {
    this.leases.clear();
  }

  stop(): void {
    clearInterval(this.sweep);
  }

  private current(key: string): Lease {
    const now = Date.now();
    let lease = this.leases.get(key);
    if (!lease || (lease.endsAt <= now && !lease.asking)) {
      lease = { left: 0, used: 0, served: 0, endsAt: Number.POSITIVE_INFINITY, refusedFrom: Number.POSITIVE_INFINITY };
      this.leases.set(key, lease);
    }
    return lease;
  }

  private async askRedis(key: string, lease: Lease, points: number): Promise<CountAnswer> {
    const ahead = lease.served < LEASE_AFTER ? 0 : Math.min(MAX_LEASE, Math.floor(lease.served / 2));
    const sentAt = Date.now();
    let answer!: CountAnswer;
    lease.asking = (async () => {
      const [granted, used, ttl] = await withTimeout(this.ask(`${this.prefix}:${key}`, points, ahead, this.size.windowS, this.size.points), this.timeoutMs);
      lease.endsAt = sentAt + ttl;
      lease.used = used;
      if (granted === 0) {
        lease.refusedFrom = Math.min(lease.refusedFrom, points);
        answer = { allowed: false, remaining: Math.max(0, this.size.points - used), msBeforeNext: ttl };
        return;
      }
      lease.left += granted - points;
      lease.served += 1;
      answer = { allowed: true, remaining: this.size.points - used + lease.left, msBeforeNext: ttl };
    })();
    try {
      await lease.asking;
    } finally {
      lease.asking = undefined;
    }
    return answer;
  }

  private forgetEnded(): void {
    const now = Date.now();
    for (const [key, lease] of this.leases) if (lease.endsAt <= now && !lease.asking) this.leases.delete(key);
  }
}

/** Rejects when `promise` takes longer than `ms`: with auto-pipelining a command may wait unsent, without its own timer running. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
