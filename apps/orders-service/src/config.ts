import { eventsConfigShape } from '@platform/events';
import { loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';

export function loadOrdersConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      PORT: portSetting(3002),
      ...eventsConfigShape,
      /** users-service, whose events (user.deleted) orders consumes. */
      USERS_URL: z.url().default('http://127.0.0.1:3001'),
      CATALOG_URL: z.url().default('http://127.0.0.1:3003'),
      INVENTORY_ADDRESS: z.string().default('127.0.0.1:50051'),
      /** How often pending cancellations and unreleased stock are swept (ms). */
      ORDERS_SWEEP_MS: z.coerce.number().int().min(100).default(2_000),
    },
    env,
  );
}

export type OrdersConfig = ReturnType<typeof loadOrdersConfig>;
