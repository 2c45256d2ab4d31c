#!/usr/bin/env node
// Runs a TypeScript tool that imports workspace code (libs by their @platform/* names): bundles
// it with esbuild into tmp/ (inside the repo, so node_modules resolve) and loads it.
// Usage: node tools/ts-run.mjs <file.ts> [args...]   or   import { loadTs } from './ts-run.mjs'
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Bundles `entry` and returns its exports. */
export async function loadTs(entry) {
  const outfile = path.join(root, 'tmp/ts-run', `${path.basename(entry, '.ts')}.cjs`);
  await build({ entryPoints: [path.resolve(entry)], outfile, bundle: true, platform: 'node', target: 'node20', format: 'cjs', packages: 'external', tsconfig: path.join(root, 'tsconfig.base.json'), logLevel: 'warning' });
  return createRequire(path.join(root, 'package.json'))(outfile);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const entry = process.argv[2];
  if (!entry) {
    console.error('usage: node tools/ts-run.mjs <file.ts> [args...]');
    process.exit(2);
  }
  process.argv.splice(1, 1); // the script sees its own file as argv[1]
  const loaded = await loadTs(entry);
  if (typeof loaded.main === 'function') await loaded.main();
}
