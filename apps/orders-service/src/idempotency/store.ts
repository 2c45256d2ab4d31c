// Idempotency-Key: the first request with a key runs; a retry with the same key and body gets
// the stored response; the same key with another body is refused. Concurrent duplicates wait
// for the first to finish and then replay it, so one key never creates two orders. The response
// is stored by the unit of work of the use case the key wraps (idempotent.ts).
import { createHash } from 'node:crypto';
import { isUniqueViolation } from '@platform/db';
import { ApiError } from '@platform/errors';
import { remainingMs } from '@platform/service-kit';
import type { DatabaseClient } from '../database';
import { IdempotencyKeyRepository } from './repository';

export const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long past its request's deadline a claim (a key with no answer yet) is held. A request does
 * not outlive its deadline by more (as a placement's stock, PLACEMENT_MARGIN_MS), so a claim still
 * unanswered then belongs to a request that died, e.g. with its replica, and a retry takes it over
 * then rather than wait out the longest budget any request may have (a minute). Should the first
 * request still be running, its answer no longer finds its claim and its order is not written
 * (IdempotencyKeyRepository.answer), so a takeover never makes a second order.
 */
export const CLAIM_MARGIN_MS = 5_000;
/**
 * An unanswered claim of the previous version (writtenByPreviousVersion) this old is abandoned
 * whatever its end says. That version wrote a claim's end as the key's 24 hours; during a rollout
 * such a replica is stopped mid-request, and its claim would hold the key for a day. That version
 * gave no request a longer budget than a minute.
 */
export const ABANDONED_AFTER_MS = 60_000;

/**
 * Whether a claim was written by the version before CLAIM_MARGIN_MS: its end is the key's 24
 * hours, where a claim written since ends at its request's deadline and margin, never near that.
 * Only such claims need ABANDONED_AFTER_MS; a claim written since is held as long as it says, so a
 * request given a longer budget than a minute (a service allows six times REQUEST_TIMEOUT_MS)
 * keeps its key while it runs.
 */
const writtenByPreviousVersion = (claim: { createdAt: Date; expiresAt: Date }) => claim.expiresAt.getTime() - claim.createdAt.getTime() > KEY_TTL_MS / 2;

/** The pause between two looks at a key another request holds. */
const POLL_INTERVAL_MS = 25;
/**
 * Kept back from a waiting duplicate's deadline so that its 409 reaches the client while the
 * gateway still waits, not after the gateway's own timer answered 504. The gateway forwards as
 * X-Request-Timeout-Ms exactly the time its timer gives the call (its remaining budget less
 * HOP_MARGIN_MS, libs/service-kit, which it keeps for its own answer, not for ours), less its
 * wait for a connection (the gateway's upstream-proxy.ts); the crossing to this service is time
 * our deadline does not count, and the 409 has the way back to make. A fifth of a second covers a
 * busy event loop at each end, there and back (tens of ms each under load), and leaves a
 * duplicate with a 1 s budget most of it to wait for the first request's answer.
 */
const CONFLICT_ANSWER_MARGIN_MS = 200;

/** `new`: this request holds the key; `claimedAt` names its claim, which its answer must still find. */
export type IdempotencyBegin = { kind: 'new'; claimedAt: Date } | { kind: 'replay'; status: number; body: unknown };

/**
 * A stable fingerprint of the request: its parsed input with its keys sorted and its null fields
 * left out, so inputs that mean the same request hash alike. A field of null is one not sent in
 * every input a key may carry (an order to place: couponCode null is no coupon, as GraphQL's
 * nullable input field sends it); only a PATCH tells them apart, and it takes no key.
 */
export function requestHashOf(input: unknown): string {
  return fingerprintOf(input, true);
}

/**
 * The fingerprint the version before requestHashOf wrote, null fields kept. A key it stored for a
 * body with a null field is still answered (KEY_TTL_MS) after the deploy, and its retry, the same
 * body, must still match it rather than be refused 422. Not needed once that version's keys have
 * all expired (a day after the deploy); for a body with no null field the two are equal.
 */
export function formerRequestHashOf(input: unknown): string {
  return fingerprintOf(input, false);
}

function fingerprintOf(input: unknown, leaveOutNulls: boolean): string {
  const canonical = JSON.stringify(input, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([, field]) => !(leaveOutNulls && field === null))
            .sort(([a], [b]) => a.localeCompare(b)),
        )
      : value,
  );
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * A client's idempotency key, checked the same way wherever it arrives (the REST header, the
 * GraphQL argument): 1 to 255 visible ASCII characters, or none at all.
 */
export function checkedIdempotencyKey(value: string | null | undefined, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(value)) {
    throw new ApiError('VALIDATION_FAILED', `${field} must be 1 to 255 visible ASCII characters.`, {
      fieldErrors: [{ field, code: 'INVALID_FORMAT', message: 'Use 1 to 255 visible ASCII characters, e.g. a UUID.' }],
    });
  }
  return value;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class IdempotencyStore {
  private readonly keys: IdempotencyKeyRepository;

  constructor(prisma: DatabaseClient) {
    this.keys = new IdempotencyKeyRepository(prisma);
  }

  /** `formerHash`: what the version before would have stored for this request (formerRequestHashOf), matched too. */
  async begin(userId: string, key: string, requestHash: string, formerHash = requestHash): Promise<IdempotencyBegin> {
    for (;;) {
      const lookStarted = Date.now();
      try {
        // Until the request answers, `expiresAt` is its claim's end (the answer sets the key's 24 hours).
        const claimedAt = await this.keys.create(userId, key, requestHash, new Date(Date.now() + remainingMs() + CLAIM_MARGIN_MS));
        return { kind: 'new', claimedAt };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      const existing = await this.keys.find(userId, key);
      if (!existing) continue; // abandoned and removed meanwhile: claim it
      // Past its 24 hours, or a claim past its request's deadline and margin, or older than any request lives (abandoned).
      const abandoned = existing.responseStatus === null && writtenByPreviousVersion(existing) && Date.now() - existing.createdAt.getTime() > ABANDONED_AFTER_MS;
      if (existing.expiresAt.getTime() <= Date.now() || abandoned) {
        await this.keys.deleteCreatedAt(userId, key, existing.createdAt);
        continue;
      }
      if (existing.requestHash !== requestHash && existing.requestHash !== formerHash) {
        throw new ApiError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body; use a new key for a new request.');
      }
      if (existing.responseStatus !== null) return { kind: 'replay', status: existing.responseStatus, body: existing.responseBody };
      // Another look costs the pause and about what this one took (a slow database makes it long):
      // give up now unless it ends with the margin still ahead of the deadline.
      const nextLookMs = POLL_INTERVAL_MS + (Date.now() - lookStarted);
      if (remainingMs() < nextLookMs + CONFLICT_ANSWER_MARGIN_MS) {
        throw new ApiError('CONFLICT', 'A request with this Idempotency-Key is still being processed; retry shortly.', { headers: { 'Retry-After': '1' } });
      }
      await wait(POLL_INTERVAL_MS);
    }
  }

  /** The request failed: forget its claim so a retry runs again. */
  async abandon(userId: string, key: string, claimedAt: Date): Promise<void> {
    await this.keys.deleteUnanswered(userId, key, claimedAt);
  }

  /** Deletes up to `batch` keys past their expiry (oldest first), so one sweep stays short. */
  async purgeExpired(batch = 1_000, now = new Date()): Promise<number> {
    return this.keys.deleteExpired(batch, now);
  }
}
