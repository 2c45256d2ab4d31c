// Tokens outlive neither their account nor their password. A token carries the credential version
// its user had when it was issued (claim `cv`); users-service bumps the version when the password
// changes and forgets the user when it is deleted. The gateway asks users-service for the current
// version (GET /internal/credentials/:id, with a service token) and remembers each answer for
// `cacheMs`, so a revoked token is refused within `cacheMs` plus one lookup, on every replica.
// Concurrent requests of one user share one lookup. If users-service cannot answer, the last
// answer stands (fail open): an outage of users-service must not log every caller out; the
// token's own expiry still bounds it.
import { ApiError } from '@platform/errors';
import type { Principal } from '@platform/auth';
import type { Logger } from '@platform/service-kit';

interface Known {
  /** Null: the user no longer exists. */
  version: number | null;
  checkedAt: number;
}

export interface CredentialCheckOptions {
  usersUrl: string;
  serviceToken: () => Promise<string>;
  /** How long an answer is trusted (the revocation bound). */
  cacheMs: number;
  logger: Logger;
  /** Longest wait for users-service's answer. */
  timeoutMs?: number;
  maxUsers?: number;
}

/** What the gateway's pipeline needs of a credential check. */
export interface CallerCredentials {
  assertCurrent(principal: Principal): Promise<void>;
}

export class CredentialCheck implements CallerCredentials {
  private readonly known = new Map<string, Known>();
  private readonly pending = new Map<string, Promise<Known | undefined>>();

  constructor(private readonly options: CredentialCheckOptions) {}

  /** Throws 401 when the principal's token was issued before its password changed, or its user is gone. */
  async assertCurrent(principal: Principal): Promise<void> {
    let known = this.known.get(principal.userId);
    if (!known || Date.now() - known.checkedAt > this.options.cacheMs) known = (await this.lookUp(principal.userId)) ?? known;
    if (!known) return; // never answered yet and users-service is away: fail open (see the file's comment)
    if (known.version === null) throw ApiError.unauthenticated('The account of this access token no longer exists.');
    if ((principal.credentialVersion ?? 1) < known.version) throw ApiError.unauthenticated('The access token was revoked (the password changed); request a new one.');
  }

  private lookUp(userId: string): Promise<Known | undefined> {
    let lookup = this.pending.get(userId);
    if (!lookup) {
      lookup = this.fetchVersion(userId).finally(() => this.pending.delete(userId));
      this.pending.set(userId, lookup);
    }
    return lookup;
  }

  private async fetchVersion(userId: string): Promise<Known | undefined> {
    try {
      const res = await fetch(`${this.options.usersUrl}/internal/credentials/${encodeURIComponent(userId)}`, {
        headers: { authorization: `Bearer ${await this.options.serviceToken()}` },
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 1_000),
      });
      if (!res.ok) throw new Error(`users-service answered ${res.status}`);
      const answer = (await res.json()) as { exists: boolean; credentialVersion: number | null };
      const known: Known = { version: answer.exists ? answer.credentialVersion : null, checkedAt: Date.now() };
      if (this.known.size >= (this.options.maxUsers ?? 100_000)) this.known.delete(this.known.keys().next().value as string);
      this.known.set(userId, known);
      return known;
    } catch (error) {
      this.options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'credential check: users-service did not answer; the last known answer stands');
      return undefined;
    }
  }
}
