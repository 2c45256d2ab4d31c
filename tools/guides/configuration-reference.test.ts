// docs/operations.md's configuration tables ("Configuration", "Domain events") against the one
// config loader: every variable an app's loader reads is in them, and every variable they name is
// read by a loader (or, for the few read outside it, by the code at all). An operator looking up a
// setting finds it, and a renamed or removed one does not linger in the reference.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
// Apps have no import path (nothing may import an app); this check reads their loaders as the OpenAPI generator reads their endpoints.
/* eslint-disable @nx/enforce-module-boundaries */
import { loadCatalogConfig } from '../../apps/catalog-service/src/config';
import { loadGatewayConfig } from '../../apps/gateway/src/config';
import { loadInventoryConfig } from '../../apps/inventory-service/src/config';
import { loadOrdersConfig } from '../../apps/orders-service/src/config';
import { loadUsersConfig } from '../../apps/users-service/src/config';
/* eslint-enable @nx/enforce-module-boundaries */

const root = path.resolve(__dirname, '../..');

/** The names a loader reads from its environment: an empty environment that records every name asked of it. */
function variablesReadBy(load: (env: NodeJS.ProcessEnv) => unknown): string[] {
  const read = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_target, name) => {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  try {
    load(env);
  } catch {
    // A setting required in some mode may refuse the empty environment; every name was asked for by then.
  }
  return [...read].filter((name) => /^[A-Z][A-Z0-9_]+$/.test(name));
}

/** The variables named in the first column of the tables under `## <title>` in docs/operations.md. */
function documentedIn(title: string): string[] {
  const operations = readFileSync(path.join(root, 'docs/operations.md'), 'utf8');
  const section = operations.split(/^## /m).find((part) => part.startsWith(`${title}\n`)) ?? '';
  const firstCells = [...section.matchAll(/^\| ([^|]+) \|/gm)].map(([, cell]) => cell);
  return [...new Set(firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map(([, name]) => name)))];
}

const loaders = { gateway: loadGatewayConfig, 'users-service': loadUsersConfig, 'orders-service': loadOrdersConfig, 'catalog-service': loadCatalogConfig, 'inventory-service': loadInventoryConfig };
const read = new Set(Object.values(loaders).flatMap(variablesReadBy));
const documented = new Set([...documentedIn('Configuration'), ...documentedIn('Domain events')]);

it('finds the loaders and the tables (the check below would pass on nothing otherwise)', () => {
  expect(read.size).toBeGreaterThan(50);
  expect(documented.size).toBeGreaterThan(50);
  expect([...read]).toEqual(expect.arrayContaining(['PORT', 'JWT_SECRET', 'RATE_LIMIT_POINTS', 'NATS_URL', 'GRPC_MAX_STREAMS']));
});

it('documents every variable an app reads', () => {
  expect(Object.entries(loaders).flatMap(([app, load]) => variablesReadBy(load).filter((name) => !documented.has(name)).map((name) => `${app}: ${name}`))).toEqual([]);
});

it('names no variable nothing reads', () => {
  // OpenTelemetry's and Apollo's variables are read by libs/tracing and libs/graphql-kit, outside the loader.
  const elsewhere = (name: string) => spawnSync('git', ['grep', '-l', '-w', name, '--', 'apps', 'libs', ':!*.test.ts'], { cwd: root, encoding: 'utf8' }).stdout.trim() !== '';
  expect([...documented].filter((name) => !read.has(name) && !(/^(OTEL|APOLLO)_/.test(name) && elsewhere(name)))).toEqual([]);
});
