// This replica's own count of one limit (rate-limits.ts says why every call is counted here too):
// a fixed window per key, opened by the key's first call, `points` per window. It counts as
// rate-limiter-flexible's RateLimiterMemory did (the same windows, the same remaining points and
// time to the next window, a refused call's points kept), without what that cost on every
// request: a promise per call and a timer per key and window. Windows that ended are swept in one
// pass every few seconds, so a flood of distinct keys holds memory for a window and a sweep at
// most, as the timers did.
import type { CountAnswer } from './count-answer';

/** The longest an ended window waits to be swept. */
const SWEEP_EVERY_MS = 10_000;

interface Window {
  consumed: number;
  endsAt: number;
}

export class MemoryWindows {
  private readonly windows = new Map<string, Window>();
  private readonly windowMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly points: number,
    windowS: number,
  ) {
    this.windowMs = windowS * 1000;
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.windowMs, SWEEP_EVERY_MS)).unref();
  }

  /** Counts `points` for `key`; allowed while the window's count stays within the limit. */
  take(key: string, points: number): CountAnswer {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { consumed: 0, endsAt: now + this.windowMs };
      this.windows.set(key, window);
    }
    window.consumed += points;
    return { allowed: window.consumed <= this.points, remaining: Math.max(this.points - window.consumed, 0), msBeforeNext: window.endsAt - now };
  }

  /** Takes back points of a call another count refused, in the window they were counted in. */
  giveBack(key: string, points: number): void {
    const window = this.windows.get(key);
    if (window && window.endsAt > Date.now()) window.consumed -= points;
  }

  stop(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}
