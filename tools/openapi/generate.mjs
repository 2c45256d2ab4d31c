#!/usr/bin/env node
// Writes apps/gateway/src/openapi/openapi.json from tools/openapi/document.ts (the services'
// zod schemas + the gateway route table). `--check` fails when the committed file is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadTs } from '../ts-run.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { buildDocument } = await loadTs(path.join(root, 'tools/openapi/document.ts'));
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
