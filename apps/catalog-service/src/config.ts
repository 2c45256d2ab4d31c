import { eventsConfigShape } from '@platform/events';
import { demoDataSetting, loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';

export function loadCatalogConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      PORT: portSetting(3003),
      ...eventsConfigShape,
      /** users-service, whose events (user.deleted) catalog consumes. */
      USERS_URL: z.url().default('http://127.0.0.1:3001'),
      /** The demo catalog into an empty database at start: unset, everywhere but production. */
      DEMO_DATA: demoDataSetting,
    },
    env,
  );
}

export type CatalogConfig = ReturnType<typeof loadCatalogConfig>;
