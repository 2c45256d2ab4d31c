import { loadConfig, portSetting } from '@platform/service-kit';

export function loadInventoryConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig({ PORT: portSetting(3004), GRPC_PORT: portSetting(50051) }, env);
}

export type InventoryConfig = ReturnType<typeof loadInventoryConfig>;
