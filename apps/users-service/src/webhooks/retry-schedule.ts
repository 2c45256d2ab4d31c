// When a failed delivery is tried again: Stripe's and Svix's curve, 10 attempts over about 3
// days (docs/api.md lists it). Fixed delays, so the schedule a receiver reads is the one it gets.
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Delay before attempt n+2 after attempt n+1 failed; the first attempt is immediate. */
export const RETRY_DELAYS_MS = [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR] as const;

export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * HOUR;

/** How long the secret replaced by a rotation keeps signing. */
export const PREVIOUS_SECRET_GRACE_MS = 24 * HOUR;

/** A 2xx must arrive within this. */
export const DELIVERY_TIMEOUT_MS = 15 * SECOND;

/**
 * The connection must be made within this, inside the 15 s: a host that drops connection
 * attempts (a firewall, a dead address) is a failure after 5 s, not 15 (its SYN is sent again
 * after 1 s and 3 s first).
 */
export const DELIVERY_CONNECT_TIMEOUT_MS = 5 * SECOND;

/** Events kept for GET /events (and their deliveries with them). */
export const EVENT_RETENTION_MS = 30 * 24 * HOUR;

/** When attempt `attemptsMade + 1` is due after `attemptsMade` failed ones, or null when they are spent. */
export function nextAttemptAt(attemptsMade: number, failedAt: Date): Date | null {
  if (attemptsMade >= MAX_ATTEMPTS) return null;
  return new Date(failedAt.getTime() + RETRY_DELAYS_MS[attemptsMade - 1]);
}
