import { loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';

export function loadUsersConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      PORT: portSetting(3001),
      ADMIN_EMAIL: z.email().default('admin@example.com'),
      ADMIN_PASSWORD: z.string().min(10).default('admin-password'),
      ACCESS_TOKEN_TTL_S: z.coerce.number().int().min(60).max(86_400).default(3600),
    },
    env,
  );
}

export type UsersConfig = ReturnType<typeof loadUsersConfig>;
