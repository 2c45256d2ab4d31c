// `npm run contract:usage -- <element>` as a service team reads it: the registry entry, then each
// caller that may have used the element (with a key's owner), from the usage store on disk.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { dayOf, FileUsageStore } from '@platform/usage';
import { repositoryRoot } from './layout';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'contract-usage-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

function contractUsage(...args: string[]): string {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
  delete env.REDIS_URL;
  return execFileSync(process.execPath, ['tools/ts-run.mjs', 'tools/contracts/usage.ts', ...args], { cwd: repositoryRoot, env, encoding: 'utf8' });
}

describe('npm run contract:usage -- <element>', () => {
  it('prints the registry entry and each caller, with the owner of a key, counting use of the answer that holds the element', async () => {
    const element = 'rest:GET /v1/orders/{id} response.200.body.items[].sku';
    const registry = path.join(dataDir, 'deprecations.yaml');
    writeFileSync(registry, `deprecations:\n  - element: "${element}"\n    replacement: "rest:GET /v1/orders/{id} response.200.body.items[].productId"\n    announced: 2026-09-01\n    sunset: 2027-03-01\n    notice: https://docs.example.com/changes/sku\n`);
    const now = new Date();
    const day = dayOf(now.getTime());
    await new FileUsageStore(path.join(dataDir, 'usage')).add([
      // A key's caller that read the whole order (no fields=): it may have read items[].sku.
      { day, element: 'rest:GET /v1/orders/{id} response.200', caller: 'key:ak_7f3', client: 'partner-sync/2.0.1', owner: 'user:u-42', calls: 3, lastUsed: now.toISOString() },
      // Another that named only `status`: not a use of items[].sku.
      { day, element: 'rest:GET /v1/orders/{id} response.200.body.status', caller: 'user:u-9', client: 'web/1.0', calls: 5, lastUsed: now.toISOString() },
    ]);

    const printed = contractUsage(element, '--registry', registry).split('\n');
    expect(printed[0]).toBe(`${element}: deprecated 2026-09-01, sunset 2027-03-01, replacement rest:GET /v1/orders/{id} response.200.body.items[].productId, notice https://docs.example.com/changes/sku`);
    expect(printed[1]).toMatch(/^caller +client +owner +1d +7d +30d +last seen +element$/);
    expect(printed[2]).toMatch(new RegExp(`^key:ak_7f3 +partner-sync/2\\.0\\.1 +user:u-42 +3 +3 +3  ${now.toISOString().replace(/\./g, '\\.')}  rest:GET /v1/orders/\\{id\\} response\\.200$`));
    expect(printed.join('\n')).not.toContain('user:u-9');
  });

  it('says so when nothing used the element', () => {
    const printed = contractUsage('rest:GET /v1/orders query.offset', '--registry', path.join(dataDir, 'none.yaml'));
    expect(printed).toContain('rest:GET /v1/orders query.offset: not in the deprecation registry');
    expect(printed).toContain('no recorded use in the last 30 days');
  });
});
