// users-service's end of the revocation push (libs/auth revocations.ts): each password change,
// user deletion and API key revocation is published on Redis for every gateway replica. A lost message (Redis out) costs
// nothing but time: the gateways' cache bound (CREDENTIALS_CACHE_MS) still refuses the token.
import { Redis } from 'ioredis';
import { type ApiKeyRevocation, publishRevocation, type Revocation } from '@platform/auth';
import type { Logger } from '@platform/service-kit';

/** What the user service tells when a token must stop working. */
export interface RevocationPublisher {
  /** Never throws: a revocation that cannot be pushed is left to the gateways' cache bound. */
  publish(revocation: Revocation | ApiKeyRevocation): Promise<void>;
}

export function redisRevocationPublisher(url: string, logger: Logger): RevocationPublisher & { stop(): Promise<void> } {
  // Fail fast: a client's password change or deletion never waits on a slow Redis.
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 1_000, commandTimeout: 200, retryStrategy: (attempt) => Math.min(attempt * 200, 2_000) });
  redis.on('error', (error: Error) => logger.debug({ err: error.message }, 'revocations: Redis connection error'));
  return {
    async publish(revocation) {
      try {
        await publishRevocation(redis, revocation);
      } catch (error) {
        logger.warn({ err: error instanceof Error ? error.message : String(error), ...revocation }, 'revocations: not published; gateways refuse the token or key within their cache bound (CREDENTIALS_CACHE_MS, API_KEYS_CACHE_MS)');
      }
    },
    stop: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
