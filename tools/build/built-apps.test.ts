// What tools/build makes of each app, read from real builds (into a temporary directory):
// - a subgraph service loads no gateway code: its main.js neither bundles @platform/graphql-gateway
//   nor imports @apollo/gateway or graphql-armor, while the gateway's does;
// - its package-lock.json pins every package the image installs, transitive ones included, at the
//   version the workspace's tests ran with, and `npm ci` installs exactly that tree.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
// The build's own module (plain CommonJS, so build-app.mjs and this test share it).
const { prunedLockfile } = require('./pruned-lockfile.cjs') as { prunedLockfile: (lock: unknown, manifest: unknown) => Lock };

const root = path.resolve(__dirname, '../..');
const gatewayOnly = ['@apollo/gateway', '@escape.tech/graphql-armor'];
const apps = ['gateway', 'users-service', 'orders-service', 'catalog-service', 'inventory-service'];
const out = mkdtempSync(path.join(tmpdir(), 'built-apps-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

interface LockEntry {
  version?: string;
  dev?: boolean;
  dependencies?: Record<string, string>;
}
interface Lock {
  lockfileVersion: number;
  packages: Record<string, LockEntry>;
}

/** What an app's build contains: the npm packages main.js imports, its bundled source (from the source map), its lock file. */
const built = new Map<string, { dir: string; packages: string[]; sources: string[]; code: string; lock: Lock }>();
function builtApp(app: string) {
  if (!built.has(app)) {
    const dir = path.join(out, app);
    execFileSync(process.execPath, [path.join(root, 'tools/build/build-app.mjs'), app, dir], { cwd: root, stdio: 'pipe' });
    const packages = Object.keys(JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).dependencies);
    const sources: string[] = JSON.parse(readFileSync(path.join(dir, 'main.js.map'), 'utf8')).sources;
    built.set(app, { dir, packages, sources, code: readFileSync(path.join(dir, 'main.js'), 'utf8'), lock: JSON.parse(readFileSync(path.join(dir, 'package-lock.json'), 'utf8')) });
  }
  return built.get(app)!;
}

/** The version installed in `dir` at a lock path (`node_modules/a/node_modules/b`). */
const installedAt = (dir: string, lockPath: string): string | undefined => {
  const manifest = path.join(dir, lockPath, 'package.json');
  return existsSync(manifest) ? JSON.parse(readFileSync(manifest, 'utf8')).version : undefined;
};

describe('built bundles', () => {
  it.each(apps.filter((app) => app !== 'gateway'))('%s bundles no gateway code', (app) => {
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

describe('the lock file an image installs from', () => {
  it.each(apps)('%s: every package, its own and those below them, at the version the workspace runs', (app) => {
    const { packages, lock } = builtApp(app);
    expect(lock.lockfileVersion).toBe(3);
    expect(Object.keys(lock.packages['']!.dependencies ?? {})).toEqual(packages);
    const locked = Object.entries(lock.packages).filter(([at]) => at !== '');
    // Transitive packages too: far more than the app's own.
    expect(locked.length).toBeGreaterThan(packages.length * 3);
    expect(locked.filter(([at, entry]) => installedAt(root, at) !== entry.version).map(([at]) => at)).toEqual([]);
    // No development package (the Prisma CLI, test tools), and nothing flagged as one (npm ci --omit=dev would skip it).
    for (const name of ['prisma', 'jest', 'typescript', 'nx']) expect(lock.packages[`node_modules/${name}`]).toBeUndefined();
    expect(locked.filter(([, entry]) => entry.dev)).toEqual([]);
  }, 60_000);

  it('installs with npm ci --omit=dev into exactly the locked tree (inventory-service)', () => {
    const { dir, lock } = builtApp('inventory-service');
    execFileSync('npm', ['ci', '--omit=dev', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'pipe', timeout: 240_000 });
    const wrong = Object.entries(lock.packages).filter(([at, entry]) => at !== '' && installedAt(dir, at) !== entry.version);
    expect(wrong.map(([at]) => at)).toEqual([]);
    // The bundle finds each package it imports.
    const missing = execFileSync(process.execPath, ['-e', "for (const name of Object.keys(require('./package.json').dependencies)) { try { require.resolve(name + '/package.json') } catch (error) { if (error.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') console.log(name) } }"], { cwd: dir, encoding: 'utf8' });
    expect(missing.trim()).toBe('');
  }, 300_000);
});

describe('prunedLockfile', () => {
  const workspace = {
    lockfileVersion: 3,
    packages: {
      '': { name: 'workspace', dependencies: { a: '1.0.0', other: '1.0.0' }, devDependencies: { cli: '1.0.0' } },
      'node_modules/a': { version: '1.0.0', dependencies: { b: '^2.0.0', c: '^1.0.0' }, optionalDependencies: { 'native-linux': '1.0.0', 'native-mac': '1.0.0' }, peerDependencies: { p: '*', cli: '*' }, peerDependenciesMeta: { cli: { optional: true } } },
      // a needs b 2, while the workspace's top-level b is 1: nested under a.
      'node_modules/a/node_modules/b': { version: '2.0.0', devOptional: true },
      'node_modules/b': { version: '1.0.0' },
      'node_modules/c': { version: '1.0.0', dependencies: { b: '^1.0.0' } },
      'node_modules/p': { version: '3.0.0', dev: true },
      'node_modules/native-linux': { version: '1.0.0', optional: true, dependencies: { 'native-helper': '1.0.0' } },
      // Reached only through native-linux: optional for the app too (npm skips it on another platform).
      'node_modules/native-helper': { version: '1.0.0', devOptional: true, os: ['linux'] },
      'node_modules/other': { version: '1.0.0' },
      'node_modules/cli': { version: '1.0.0', dev: true },
    },
  };

  it("keeps what the app's packages reach, at the workspace's paths: nested versions, present optional packages, required peers", () => {
    const lock = prunedLockfile(workspace, { name: 'app', version: '0.1.0', dependencies: { a: '1.0.0' } });
    expect(lock.packages).toEqual({
      '': { name: 'app', version: '0.1.0', dependencies: { a: '1.0.0' } },
      'node_modules/a': workspace.packages['node_modules/a'],
      'node_modules/a/node_modules/b': { version: '2.0.0' },
      'node_modules/b': { version: '1.0.0' },
      'node_modules/c': workspace.packages['node_modules/c'],
      'node_modules/native-helper': { version: '1.0.0', optional: true, os: ['linux'] },
      'node_modules/native-linux': { version: '1.0.0', optional: true, dependencies: { 'native-helper': '1.0.0' } },
      'node_modules/p': { version: '3.0.0' },
    });
  });

  it('keeps a package optional only while nothing needs it outright', () => {
    const lock = prunedLockfile({ ...workspace, packages: { ...workspace.packages, 'node_modules/other': { version: '1.0.0', dependencies: { 'native-helper': '1.0.0' } } } }, { name: 'app', version: '0.1.0', dependencies: { a: '1.0.0', other: '1.0.0' } });
    expect(lock.packages['node_modules/native-helper']).toEqual({ version: '1.0.0', os: ['linux'] });
    expect(lock.packages['node_modules/native-linux']).toEqual({ version: '1.0.0', optional: true, dependencies: { 'native-helper': '1.0.0' } });
  });

  it('refuses a package pinned at another version than the lock holds, or one the lock lacks', () => {
    expect(() => prunedLockfile(workspace, { name: 'app', version: '0.1.0', dependencies: { a: '1.0.1' } })).toThrow('app pins a@1.0.1, but package-lock.json holds 1.0.0: run npm install');
    const broken = { ...workspace, packages: { ...workspace.packages, 'node_modules/c': { version: '1.0.0', dependencies: { gone: '^1.0.0' } } } };
    expect(() => prunedLockfile(broken, { name: 'app', version: '0.1.0', dependencies: { a: '1.0.0' } })).toThrow('package-lock.json has no gone for node_modules/c: run npm install');
  });
});
