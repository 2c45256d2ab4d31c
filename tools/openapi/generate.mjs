#!/usr/bin/env node
// Writes apps/gateway/src/openapi/openapi.json from tools/openapi/document.ts (the services'
// zod schemas + the gateway route table). `--check` fails when the committed file is stale.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeOrCheck } from '../generated-file.mjs';
import { loadTs } from '../ts-run.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { buildDocument } = await loadTs(path.join(root, 'tools/openapi/document.ts'));
writeOrCheck(root, path.join(root, 'apps/gateway/src/openapi/openapi.json'), `${JSON.stringify(buildDocument(), null, 2)}\n`, 'node tools/openapi/generate.mjs');
