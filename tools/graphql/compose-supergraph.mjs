#!/usr/bin/env node
// Composes the supergraph from the three subgraphs' SDL files (build time, no introspection at
// start) into apps/gateway/src/graphql/supergraph.graphql. `--check` fails if the committed file
// is not what the SDL composes to.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The URLs are placeholders: the gateway replaces them with its configured service URLs.
const subgraphs = [
  { name: 'users', app: 'users-service' },
  { name: 'orders', app: 'orders-service' },
  { name: 'catalog', app: 'catalog-service' },
].map(({ name, app }) => ({
  name,
  url: `http://${app}/graphql`,
  typeDefs: parse(readFileSync(path.join(root, 'apps', app, 'src/graphql/schema.graphql'), 'utf8')),
}));

const result = composeServices(subgraphs);
if (result.errors?.length) {
  for (const error of result.errors) console.error(error.message);
  process.exit(1);
}
const target = path.join(root, 'apps/gateway/src/graphql/supergraph.graphql');
const content = `${result.supergraphSdl.trimEnd()}\n`;
if (process.argv.includes('--check')) {
  const committed = readFileSync(target, 'utf8');
  if (committed !== content) {
    console.error('supergraph.graphql is stale: run `node tools/graphql/compose-supergraph.mjs` and commit it.');
    process.exit(1);
  }
  console.log('supergraph.graphql matches the subgraph SDL');
} else {
  writeFileSync(target, content);
  console.log(`wrote ${path.relative(root, target)}`);
}
