// Tokens outlive neither their account nor their password. A token carries the credential version
// its user had when it was issued (claim `cv`); users-service bumps the version when the password
// changes and forgets the user when it is deleted.
//
// Two paths bring a revocation to the gateway:
// - Pushed, within a second in the normal case. With REDIS_URL set, users-service publishes each
//   revocation (the new version, or the deletion) on Redis pub/sub and every gateway replica,
//   subscribed (revocation-feed.ts), applies it at once. Without Redis (the embedded default, one
//   gateway) every password change and deletion goes through this gateway (REST PATCH/PUT/DELETE
//   /v1/users/:id; GraphQL cannot change a password or delete a user), so the gateway forgets the
//   user's answer as soon as such a call succeeds (`forgetAfterUserWrite` in app.ts) and asks
//   users-service again on the user's next request.
// - Bounded, whatever happens to the push. The gateway asks users-service for the current version
//   (GET /internal/credentials/:id, with a service token) and trusts each answer `cacheMs`
//   (CREDENTIALS_CACHE_MS, 5 s). Past that, a request waits for a new answer; when users-service
//   does not give one (stopped, hung, failing) within `timeoutMs`, the request is refused with 503
//   SERVICE_UNAVAILABLE and Retry-After (fail closed): a revoked token is never accepted on an
//   answer older than the bound. Callers whose answer is still fresh are served meanwhile.
// Concurrent requests of one user share one lookup. A lookup under way when a revocation arrives
// cannot overwrite it, and a deletion is final (user ids are never reused).
import { ApiError } from '@platform/errors';
import type { Principal, Revocation } from '@platform/auth';
import { createOutgoingCalls, type HttpTarget, type OutgoingCalls, RETRY_AFTER_HEADER } from '@platform/outgoing-calls';
import type { Logger } from '@platform/service-kit';

interface Known {
  /** Null: the user no longer exists. */
  version: number | null;
  checkedAt: number;
}

export interface CredentialCheckOptions {
  usersUrl: string;
  /** The gateway's outgoing-call factory; without it, one is made with `serviceToken`. */
  calls?: OutgoingCalls;
  serviceToken?: () => Promise<string>;
  /** How long an answer is trusted (the revocation bound when no push arrives). */
  cacheMs: number;
  logger: Logger;
  /** Longest wait for users-service's answer; then 503. */
  timeoutMs?: number;
  maxUsers?: number;
}

/** What the gateway's pipeline needs of a credential check. */
export interface CallerCredentials {
  assertCurrent(principal: Principal): Promise<void>;
  /** An API key's owner still exists (keys outlive a password change, not their user). */
  assertOwnerExists(userId: string): Promise<void>;
  /** The user's account changed (a password or a deletion went through this gateway): ask again next time. */
  forget(userId: string): void;
}

export class CredentialCheck implements CallerCredentials {
  private readonly known = new Map<string, Known>();
  private readonly pending = new Map<string, Promise<Known | undefined>>();
  private readonly users: HttpTarget;

  constructor(private readonly options: CredentialCheckOptions) {
    this.users = (options.calls ?? createOutgoingCalls({ serviceToken: options.serviceToken })).http('users', options.usersUrl);
  }

  /**
   * Throws 401 when the principal's token was issued before its password changed, or its user is
   * gone; 503 when no answer younger than the bound can be had.
   */
  async assertCurrent(principal: Principal): Promise<void> {
    const known = await this.currentAnswer(principal.userId, 'this access token');
    if (known.version === null) throw ApiError.unauthenticated('The account of this access token no longer exists.');
    if ((principal.credentialVersion ?? 1) < known.version) throw ApiError.unauthenticated('The access token was revoked (the password changed); request a new one.');
  }

  async assertOwnerExists(userId: string): Promise<void> {
    if ((await this.currentAnswer(userId, 'this API key')).version === null) throw ApiError.unauthenticated('The owner of this API key no longer exists.');
  }

  /** An answer younger than the bound, or 503. */
  private async currentAnswer(userId: string, what: string): Promise<Known> {
    let known = this.known.get(userId);
    if (!known || Date.now() - known.checkedAt >= this.options.cacheMs) known = await this.lookUp(userId);
    if (!known) throw new ApiError('SERVICE_UNAVAILABLE', `Whether ${what} is still valid cannot be checked right now; retry shortly.`, { headers: { ...RETRY_AFTER_HEADER } });
    return known;
  }

  /** A revocation users-service pushed: applied at once, never undone by an older answer. */
  revoked(revocation: Revocation): void {
    this.pending.delete(revocation.userId); // a lookup under way may have read the old version
    const current = this.known.get(revocation.userId);
    const version = current?.version === null || revocation.credentialVersion === null ? null : Math.max(revocation.credentialVersion, current?.version ?? 0);
    this.remember(revocation.userId, { version, checkedAt: Date.now() });
  }

  forget(userId: string): void {
    this.pending.delete(userId);
    this.known.delete(userId);
  }

  /** Every answer may have missed a revocation (the push was interrupted): ask again for each. */
  forgetAll(): void {
    this.pending.clear();
    this.known.clear();
  }

  private lookUp(userId: string): Promise<Known | undefined> {
    let lookup = this.pending.get(userId);
    if (!lookup) {
      const started = this.fetchVersion(userId).then((known) => {
        // Stored only if no revocation came while it was under way (which dropped it from `pending`).
        if (known && this.pending.get(userId) === started) this.remember(userId, known);
        return known;
      });
      lookup = started.finally(() => {
        if (this.pending.get(userId) === started) this.pending.delete(userId);
      });
      this.pending.set(userId, started);
    }
    return lookup;
  }

  private remember(userId: string, known: Known): void {
    this.known.delete(userId); // re-inserted last: the oldest entry is the first evicted
    if (this.known.size >= (this.options.maxUsers ?? 100_000)) this.known.delete(this.known.keys().next().value as string);
    this.known.set(userId, known);
  }

  private async fetchVersion(userId: string): Promise<Known | undefined> {
    try {
      const res = await this.users.request({ operation: 'credential-version', path: `/internal/credentials/${encodeURIComponent(userId)}`, credential: 'service', timeoutMs: this.options.timeoutMs ?? 1_000, json: true });
      if (res.status >= 300) throw new Error(`users-service answered ${res.status}`);
      const answer = res.body as { exists: boolean; credentialVersion: number | null };
      return { version: answer.exists ? answer.credentialVersion : null, checkedAt: Date.now() };
    } catch (error) {
      this.options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'credential check: users-service did not answer; requests of this user are refused (503) until it does');
      return undefined;
    }
  }
}
