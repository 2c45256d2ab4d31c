import { eventsConfigShape } from '@platform/events';
import { loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';

export function loadUsersConfig(env: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(
    {
      PORT: portSetting(3001),
      ...eventsConfigShape,
      ADMIN_EMAIL: z.email().default('admin@example.com'),
      ADMIN_PASSWORD: z.string().min(10).default('admin-password'),
      ACCESS_TOKEN_TTL_S: z.coerce.number().int().min(60).max(86_400).default(3600),
      /** The gateways' Redis: password changes and deletions are published there so every gateway refuses the old tokens within a second. Unset: no push (one gateway sees them pass). */
      REDIS_URL: z.string().optional(),
      /** The HMAC key of stored API key hashes; unset: derived from JWT_SECRET (set it in production, so a JWT_SECRET rotation keeps every key working). */
      API_KEY_HASH_SECRET: z.string().min(32, 'API_KEY_HASH_SECRET must be at least 32 characters').optional(),
    },
    env,
  );
  if (config.NODE_ENV === 'production' && !config.API_KEY_HASH_SECRET) config.warnings.push('API_KEY_HASH_SECRET is not set: API key hashes use a key derived from JWT_SECRET, so rotating JWT_SECRET would stop every issued API key.');
  return config;
}

/** API_KEY_HASH_SECRET, or a key derived from JWT_SECRET as CURSOR_SECRET is. */
export function apiKeyHashSecretOf(config: { API_KEY_HASH_SECRET?: string; jwtSecret: string }): string {
  return config.API_KEY_HASH_SECRET ?? `api-key:${config.jwtSecret}`;
}

export type UsersConfig = ReturnType<typeof loadUsersConfig>;
