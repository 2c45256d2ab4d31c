#!/usr/bin/env node
// Composes the supergraph from the four subgraphs' SDL files (build time, no introspection at
// start) into apps/gateway/src/graphql/supergraph.graphql. `--check` fails if the committed file
// is not what the SDL composes to.
process.env.APOLLO_TELEMETRY_DISABLED = 'true';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { writeOrCheck } from '../generated-file.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The URLs are placeholders: the gateway replaces them with its configured service URLs.
const subgraphs = [
  { name: 'users', app: 'users-service' },
  { name: 'orders', app: 'orders-service' },
  { name: 'catalog', app: 'catalog-service' },
  { name: 'inventory', app: 'inventory-service' },
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
writeOrCheck(root, path.join(root, 'apps/gateway/src/graphql/supergraph.graphql'), `${result.supergraphSdl.trimEnd()}\n`, 'node tools/graphql/compose-supergraph.mjs');
