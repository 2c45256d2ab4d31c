import path from 'node:path';
import { registrySetting } from '@platform/deprecations';
import { eventsConfigShape } from '@platform/events';
import { ConfigError, loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';
import { DISPATCH_WORKERS, WORKERS_PER_ACCOUNT } from './webhooks/dispatcher';
import { DELIVERY_CONNECT_TIMEOUT_MS, DELIVERY_TIMEOUT_MS } from './webhooks/retry-schedule';

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
      /** The services whose events webhooks carry (their /internal/events on the embedded transport; NATS subjects otherwise). */
      ORDERS_URL: z.url().default('http://127.0.0.1:3002'),
      CATALOG_URL: z.url().default('http://127.0.0.1:3003'),
      INVENTORY_URL: z.url().default('http://127.0.0.1:3004'),
      /** Lets webhook URLs point at loopback addresses: tests and local development only, never in production. Private, link-local and metadata addresses are refused whatever it says. */
      WEBHOOK_ALLOW_LOOPBACK: z.enum(['true', 'false']).default('false').transform((value) => value === 'true'),
      /** How often due webhook deliveries (retries) are looked for without being woken (ms). */
      WEBHOOK_DISPATCH_MS: z.coerce.number().int().min(50).max(60_000).default(1_000),
      /** Webhook deliveries to one account's endpoints a replica sends at once, of its 8: the rest stay free for other accounts however slowly that account's endpoints answer. */
      WEBHOOK_ACCOUNT_CONCURRENCY: z.coerce.number().int().min(1).max(DISPATCH_WORKERS).default(WORKERS_PER_ACCOUNT),
      /**
       * The ports a webhook URL may name (`443,80`), as the network lets deliveries out: a URL on
       * another is refused at registration (422) instead of failing every delivery unseen. Unset:
       * any port (a machine whose network lets every port out).
       */
      WEBHOOK_ALLOWED_PORTS: z
        .string()
        .regex(/^\s*\d{1,5}\s*(,\s*\d{1,5}\s*)*$/, 'a comma-separated list of ports, e.g. 443,80')
        .transform((list) => list.split(',').map(Number))
        .refine((ports) => ports.every((port) => port >= 1 && port <= 65_535), 'every port is 1 to 65535')
        .optional(),
      /** How long a webhook delivery may take to connect (ms), inside the 15 s the whole attempt has. */
      WEBHOOK_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(DELIVERY_TIMEOUT_MS).default(DELIVERY_CONNECT_TIMEOUT_MS),
      /** The HMAC key of stored API key hashes; unset: derived from JWT_SECRET (set it in production, so a JWT_SECRET rotation keeps every key working). */
      API_KEY_HASH_SECRET: z.string().min(32, 'API_KEY_HASH_SECRET must be at least 32 characters').optional(),
      /** The deprecation registry: its webhook entries add Deprecation/Sunset/Link to deliveries, and leave a field out in a brownout and after the sunset. Default: deprecations.yaml beside main.js. */
      DEPRECATIONS_FILE: registrySetting(path.join(__dirname, 'deprecations.yaml')),
    },
    env,
  );
  // Loopback targets would let any user make the platform call its own internal ports: a test setting that must never reach production.
  if (config.NODE_ENV === 'production' && config.WEBHOOK_ALLOW_LOOPBACK) throw new ConfigError([{ variable: 'WEBHOOK_ALLOW_LOOPBACK', problem: 'must not be true when NODE_ENV=production (it lets webhook URLs reach loopback addresses)' }]);
  if (config.NODE_ENV === 'production' && !config.API_KEY_HASH_SECRET) config.warnings.push('API_KEY_HASH_SECRET is not set: API key hashes use a key derived from JWT_SECRET, so rotating JWT_SECRET would stop every issued API key.');
  return config;
}

/** API_KEY_HASH_SECRET, or a key derived from JWT_SECRET as CURSOR_SECRET is. */
export function apiKeyHashSecretOf(config: { API_KEY_HASH_SECRET?: string; jwtSecret: string }): string {
  return config.API_KEY_HASH_SECRET ?? `api-key:${config.jwtSecret}`;
}

export type UsersConfig = ReturnType<typeof loadUsersConfig>;
