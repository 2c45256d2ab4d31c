import { loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';

export function loadInventoryConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      PORT: portSetting(3004),
      GRPC_PORT: portSetting(50051),
      /** Services whose service tokens may call Inventory (comma-separated names). */
      INVENTORY_CALLERS: z
        .string()
        .default('orders-service')
        .transform((names) => names.split(',').map((name) => name.trim()).filter(Boolean)),
    },
    env,
  );
}

export type InventoryConfig = ReturnType<typeof loadInventoryConfig>;
