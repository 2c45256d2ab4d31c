import { loadConfig, portSetting } from '@platform/service-kit';

export function loadCatalogConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig({ PORT: portSetting(3003) }, env);
}

export type CatalogConfig = ReturnType<typeof loadCatalogConfig>;
