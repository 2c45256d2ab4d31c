#!/usr/bin/env node
// Writes the trusted documents manifest (apps/gateway/src/graphql/trusted-documents.json) from
// the .graphql operations in apps/gateway/src/graphql/operations: SHA-256 of each document's text
// → the text, after checking each against the composed supergraph. Clients send the hash
// (extensions.persistedQuery.sha256Hash, Apollo's persisted-query shape); with
// GRAPHQL_TRUSTED_DOCUMENTS=only the gateway runs nothing else. `--check` fails when stale (CI).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSchema, parse, validate } from 'graphql';
import { writeOrCheck } from '../generated-file.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = path.join(root, 'apps/gateway/src/graphql/operations');
const schema = buildSchema(readFileSync(path.join(root, 'apps/gateway/src/graphql/supergraph.graphql'), 'utf8'), { assumeValidSDL: true });

const documents = {};
for (const file of readdirSync(dir).filter((name) => name.endsWith('.graphql')).sort()) {
  const text = readFileSync(path.join(dir, file), 'utf8');
  const errors = validate(schema, parse(text));
  if (errors.length) {
    console.error(`${file}: ${errors.map((error) => error.message).join('; ')}`);
    process.exit(1);
  }
  documents[createHash('sha256').update(text).digest('hex')] = text;
}
writeOrCheck(root, path.join(root, 'apps/gateway/src/graphql/trusted-documents.json'), `${JSON.stringify(documents, null, 2)}\n`, 'node tools/graphql/build-trusted-documents.mjs');
