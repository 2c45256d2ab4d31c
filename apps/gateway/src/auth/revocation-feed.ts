// The gateway's end of the revocation push (libs/auth revocations.ts): a Redis connection of its
// own (a subscribed connection can do nothing else) listening on the revocations channel, which
// users-service publishes on. Each message is applied at once: a password change or deletion to the
// credential check, a revoked API key to the key check.
//
// Pub/sub keeps nothing for an absent subscriber: revocations published while this connection is
// down are lost. The cache bound still holds for them (no answer is trusted longer than
// CREDENTIALS_CACHE_MS), and when the subscription is back every cached answer is dropped, since any
// of them may predate a lost revocation: the one-second path is back as soon as Redis is.
import { Redis } from 'ioredis';
import { REVOCATIONS_CHANNEL, revocationOf } from '@platform/auth';
import type { Logger } from '@platform/service-kit';
import type { ApiKeyCheck } from './api-keys';
import type { CredentialCheck } from './credentials';

export interface RevocationFeed {
  /** Resolves once subscribed, or after `timeoutMs` (the feed keeps trying in the background). */
  ready(timeoutMs: number): Promise<boolean>;
  stop(): Promise<void>;
}

export function subscribeToRevocations(url: string, credentials: Pick<CredentialCheck, 'revoked' | 'forgetAll'>, logger: Logger, apiKeys?: Pick<ApiKeyCheck, 'revoked' | 'forgetAll'>): RevocationFeed {
  const redis = new Redis(url, { connectTimeout: 1_000, retryStrategy: (attempt) => Math.min(attempt * 200, 2_000), maxRetriesPerRequest: null });
  let subscribed = false;
  let everSubscribed = false;
  const waiting = new Set<(subscribed: boolean) => void>();
  redis.on('error', (error: Error) => logger.debug({ err: error.message }, 'revocation feed: Redis connection error'));
  redis.on('close', () => {
    if (subscribed) logger.warn('revocation feed: Redis connection lost; revocations reach this gateway within CREDENTIALS_CACHE_MS until it is back');
    subscribed = false;
  });
  const nowSubscribed = () => {
    everSubscribed = subscribed = true;
    for (const resolve of waiting) resolve(true);
    waiting.clear();
  };
  // After each reconnection ioredis sends SUBSCRIBE again before it says `ready`.
  redis.on('ready', () => {
    if (!everSubscribed) return; // the first subscription is confirmed below
    credentials.forgetAll();
    apiKeys?.forgetAll();
    logger.info('revocation feed: subscribed again; every cached credential and API key answer dropped');
    nowSubscribed();
  });
  redis.on('message', (channel: string, message: string) => {
    if (channel !== REVOCATIONS_CHANNEL) return;
    const revocation = revocationOf(message);
    if (revocation && 'apiKeyId' in revocation) apiKeys?.revoked(revocation.apiKeyId);
    else if (revocation) credentials.revoked(revocation);
    else logger.warn({ message: message.slice(0, 200) }, 'revocation feed: a message that is not a revocation, ignored');
  });
  redis.subscribe(REVOCATIONS_CHANNEL).then(nowSubscribed, (error: Error) => logger.warn({ err: error.message }, 'revocation feed: subscribing failed; revocations reach this gateway within CREDENTIALS_CACHE_MS'));
  return {
    ready: (timeoutMs) =>
      subscribed
        ? Promise.resolve(true)
        : new Promise((resolve) => {
            const timer = setTimeout(() => (waiting.delete(done), resolve(false)), timeoutMs);
            const done = (value: boolean) => (clearTimeout(timer), resolve(value));
            waiting.add(done);
          }),
    // A subscriber has nothing to flush; QUIT would wait forever, queued, while Redis is unreachable.
    stop: async () => redis.disconnect(),
  };
}
