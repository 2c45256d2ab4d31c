// Revocations pushed from users-service to every gateway replica, so a token its account outlived
// is refused within a second instead of at the end of the gateway's cache bound. The message
// carries the new answer (the credential version, or null for a deleted user), so a gateway need
// not ask users-service again to apply it. Sent over Redis pub/sub when REDIS_URL is set; the
// gateway's bounded cache (CREDENTIALS_CACHE_MS) still holds when a message is lost.

/** The Redis pub/sub channel users-service publishes on and every gateway subscribes to. */
export const REVOCATIONS_CHANNEL = 'platform:credentials:revoked';

export interface Revocation {
  userId: string;
  /** The user's credential version now; null: the user was deleted. */
  credentialVersion: number | null;
}

/** An issued API key that stopped working (deleted, or its rotation overlap ended early). */
export interface ApiKeyRevocation {
  apiKeyId: string;
}

/** What a publisher needs of a Redis client (ioredis's `publish`). */
export interface RevocationBus {
  publish(channel: string, message: string): Promise<unknown>;
}

export function publishRevocation(bus: RevocationBus, revocation: Revocation | ApiKeyRevocation): Promise<unknown> {
  const message = 'apiKeyId' in revocation ? { apiKeyId: revocation.apiKeyId } : { userId: revocation.userId, credentialVersion: revocation.credentialVersion };
  return bus.publish(REVOCATIONS_CHANNEL, JSON.stringify(message));
}

/** The revocation a message carries, or undefined for anything else on the channel. */
export function revocationOf(message: string): Revocation | ApiKeyRevocation | undefined {
  try {
    const parsed = JSON.parse(message) as Partial<Revocation & ApiKeyRevocation>;
    if (typeof parsed.apiKeyId === 'string') return { apiKeyId: parsed.apiKeyId };
    const version = parsed.credentialVersion;
    if (typeof parsed.userId !== 'string' || !(version === null || (typeof version === 'number' && Number.isInteger(version)))) return undefined;
    return { userId: parsed.userId, credentialVersion: version };
  } catch {
    return undefined;
  }
}
