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
    },
    env,
  );
}

export type UsersConfig = ReturnType<typeof loadUsersConfig>;
