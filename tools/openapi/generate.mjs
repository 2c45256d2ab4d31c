#!/usr/bin/env node
// Writes apps/gateway/src/openapi/openapi.json from tools/openapi/document.ts (the services'
// zod schemas + the gateway route table). `--check` fails when the committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Inside the repo (tmp/ is ignored) so the bundle resolves the workspace's node_modules.
const outfile = path.join(root, 'tmp/openapi/document.cjs');
await build({ entryPoints: [path.join(root, 'tools/openapi/document.ts')], outfile, bundle: true, platform: 'node', format: 'cjs', packages: 'external', tsconfig: path.join(root, 'tsconfig.base.json'), logLevel: 'warning' });
const { buildDocument } = createRequire(path.join(root, 'package.json'))(outfile);
const content = `${JSON.stringify(buildDocument(), null, 2)}\n`;
const target = path.join(root, 'apps/gateway/src/openapi/openapi.json');
if (process.argv.includes('--check')) {
  if (readFileSync(target, 'utf8') !== content) {
    console.error('openapi.json is stale: run `node tools/openapi/generate.mjs` and commit it.');
    process.exit(1);
  }
  console.log('openapi.json matches the schemas');
} else {
  writeFileSync(target, content);
  console.log(`wrote ${path.relative(root, target)}`);
}
