import { eventsConfigShape } from '@platform/events';
import { loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';

export function loadUsersConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
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
    },
    env,
  );
}

export type UsersConfig = ReturnType<typeof loadUsersConfig>;
