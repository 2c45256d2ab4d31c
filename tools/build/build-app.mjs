#!/usr/bin/env node
// Builds one app into dist/apps/<app>: main.js (workspace code bundled, npm packages left as
// imports), its runtime files (migrations, GraphQL SDL), a package.json that lists only the npm
// packages the bundle imports, so an image installs nothing else, and the package-lock.json that
// pins them and everything below them at the workspace lock's versions.
// Usage: node tools/build/build-app.mjs <app> [out dir, default dist/apps/<app>]
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBuiltin } from 'node:module';
import { build } from 'esbuild';
import { prunedLockfile } from './pruned-lockfile.cjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const app = process.argv[2];
if (!app || !existsSync(path.join(root, 'apps', app, 'src/main.ts'))) {
  console.error('usage: build-app.mjs <app with src/main.ts> [out dir]');
  process.exit(2);
}
const appDir = path.join(root, 'apps', app);
const outDir = process.argv[3] ? path.resolve(process.argv[3]) : path.join(root, 'dist/apps', app);
await rm(outDir, { recursive: true, force: true });
await mkdir(outDir, { recursive: true });

const result = await build({
  entryPoints: [path.join(appDir, 'src/main.ts')],
  outfile: path.join(outDir, 'main.js'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  packages: 'external',
  tsconfig: path.join(root, 'tsconfig.base.json'),
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  logLevel: 'warning',
});

// Runtime files the code reads beside main.js.
const runtimeFiles = [
  ['prisma/migrations', 'migrations'],
  ['src/graphql/schema.graphql', 'schema.graphql'],
  ['src/graphql/supergraph.graphql', 'supergraph.graphql'],
  ['src/openapi/openapi.json', 'openapi.json'],
  ['src/openapi/event-schemas.json', 'event-schemas.json'],
  ['src/graphql/trusted-documents.json', 'trusted-documents.json'],
];
for (const [from, to] of runtimeFiles) {
  const source = path.join(appDir, from);
  if (existsSync(source)) await cp(source, path.join(outDir, to), { recursive: true });
}
// The gateway (REST, GraphQL), inventory-service (RPCs) and users-service (webhook payloads) act
// on the deprecation registry (headers, brownouts, sunsets): it ships beside main.js
// (DEPRECATIONS_FILE names another, e.g. the gateway's ConfigMap, to change brownouts without a new image).
if (app === 'gateway' || app === 'inventory-service' || app === 'users-service') await cp(path.join(root, 'contracts/deprecations.yaml'), path.join(outDir, 'deprecations.yaml'));

// Browser files the app serves (the gateway's /docs pages), copied from npm into pages/.
const pageAssets = path.join(appDir, 'src/browser/page-assets.json');
if (existsSync(pageAssets)) {
  await mkdir(path.join(outDir, 'pages'));
  for (const [name, npmPath] of Object.entries(JSON.parse(await readFile(pageAssets, 'utf8')))) await cp(path.join(root, 'node_modules', npmPath), path.join(outDir, 'pages', name));
}

// The npm packages main.js imports, at the exact versions installed here (what the tests ran).
const rootPackage = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
const imported = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const { path: specifier, external } of output.imports) {
    if (!external || specifier.startsWith('node:')) continue;
    const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
    if (rootPackage.dependencies?.[name]) imported.add(name);
    else if (!isBuiltin(name)) throw new Error(`${app} imports ${name}, which is not a runtime dependency in package.json`);
  }
}
const installedVersion = async (name) => JSON.parse(await readFile(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;
const dependencies = Object.fromEntries(await Promise.all([...imported].sort().map(async (name) => [name, await installedVersion(name)])));
const manifest = { name: app, version: rootPackage.version, private: true, main: 'main.js', engines: rootPackage.engines, dependencies };
await writeFile(path.join(outDir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
// And the packages below them, at the versions of the workspace's lock (the image runs npm ci).
const lock = prunedLockfile(JSON.parse(await readFile(path.join(root, 'package-lock.json'), 'utf8')), manifest);
await writeFile(path.join(outDir, 'package-lock.json'), JSON.stringify(lock, null, 2) + '\n');
console.log(`built ${path.relative(root, outDir)} (${Object.keys(dependencies).length} runtime packages, ${Object.keys(lock.packages).length - 1} locked)`);

