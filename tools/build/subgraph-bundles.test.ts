// A subgraph service loads no gateway code: each one's build (main.js, as tools/build bundles
// it) neither bundles @platform/graphql-gateway nor imports @apollo/gateway or graphql-armor,
// while the gateway's does (so the check reads real bundles). Builds into a temporary directory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const gatewayOnly = ['@apollo/gateway', '@escape.tech/graphql-armor'];
const out = mkdtempSync(path.join(tmpdir(), 'subgraph-bundles-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

/** What an app's build contains: the npm packages main.js imports, and its bundled source (from the source map). */
function builtApp(app: string): { packages: string[]; sources: string[]; code: string } {
  const dir = path.join(out, app);
  execFileSync(process.execPath, [path.join(root, 'tools/build/build-app.mjs'), app, dir], { cwd: root, stdio: 'pipe' });
  const packages = Object.keys(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies);
  const sources: string[] = JSON.parse(readFileSync(path.join(dir, 'main.js.map'), 'utf8')).sources;
  return { packages, sources, code: readFileSync(path.join(dir, 'main.js'), 'utf8') };
}

describe('built bundles', () => {
  it.each(['users-service', 'orders-service', 'catalog-service', 'inventory-service'])('%s bundles no gateway code', (app) => {
    const { packages, sources, code } = builtApp(app);
    expect(packages).toContain('@apollo/subgraph'); // it does serve a subgraph
    for (const name of gatewayOnly) {
      expect(packages).not.toContain(name);
      expect(code).not.toContain(`require("${name}`);
    }
    expect(sources.filter((source) => source.includes('libs/graphql-gateway/'))).toEqual([]);
  }, 60_000);

  it('the gateway bundles it', () => {
    const { packages, sources } = builtApp('gateway');
    expect(packages).toEqual(expect.arrayContaining(gatewayOnly));
    expect(sources.some((source) => source.includes('libs/graphql-gateway/src/federation.ts'))).toBe(true);
  }, 60_000);
});
