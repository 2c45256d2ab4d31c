// npm run contract:usage -- <element>: who used the element (and what it covers: an operation's
// parameters and fields) in the last 30 days, from the usage store the gateway and
// inventory-service record into: Redis when REDIS_URL is set (keys under USAGE_KEY_PREFIX, default
// usage:v1), else DATA_DIR/usage (default .data).
// npm run contract:usage -- --export <file>: writes the usage export `contract:check --usage` reads.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { covers, loadDeprecations, mayHaveUsed } from '@platform/deprecations';
import { dayOf, exportUsage, openUsageStore, usageByCaller } from '@platform/usage';
import { repositoryRoot } from './layout';

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

export async function main(): Promise<void> {
  const store = openUsageStore({ redisUrl: process.env.REDIS_URL, keyPrefix: process.env.USAGE_KEY_PREFIX, dataDir: path.resolve(repositoryRoot, process.env.DATA_DIR ?? '.data') });
  try {
    const exportFile = option('--export');
    if (exportFile) {
      const exported = await exportUsage(store);
      writeFileSync(exportFile, `${JSON.stringify(exported, null, 2)}\n`);
      console.log(`contract:usage: ${Object.keys(exported.elements).length} elements used since ${exported.recordedSince}, written to ${exportFile}`);
      return;
    }
    const element = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
    if (!element) {
      console.error('usage: npm run contract:usage -- <element>   e.g. "rest:GET /v1/orders query.offset", graphql:Shipment.trackingNumber\n       npm run contract:usage -- --export <file>');
      process.exitCode = 2;
      return;
    }
    const registry = loadDeprecations(path.resolve(repositoryRoot, option('--registry') ?? 'contracts/deprecations.yaml'));
    const entry = registry.find((item) => covers(item.element, element));
    if (entry) console.log(`${entry.element}: deprecated ${entry.announced}, sunset ${entry.sunset}, replacement ${entry.replacement}, notice ${entry.notice}`);
    else console.log(`${element}: not in the deprecation registry`);
    const today = dayOf(Date.now());
    const uses = await usageByCaller(store, { today, wanted: (used) => mayHaveUsed(element, used) });
    if (uses.length === 0) {
      console.log(`no recorded use in the last 30 days (to ${today}, records since ${(await store.recordedSince()) ?? 'never'})`);
      return;
    }
    console.log(`${'caller'.padEnd(28)} ${'client'.padEnd(24)} ${'owner'.padEnd(20)} ${'1d'.padStart(7)} ${'7d'.padStart(7)} ${'30d'.padStart(8)}  last seen                 element`);
    for (const use of uses) {
      console.log(`${use.caller.padEnd(28)} ${use.client.padEnd(24)} ${(use.owner ?? '-').padEnd(20)} ${String(use.calls1d).padStart(7)} ${String(use.calls7d).padStart(7)} ${String(use.calls30d).padStart(8)}  ${use.lastUsed}  ${use.element}`);
    }
  } finally {
    await store.close();
  }
}
