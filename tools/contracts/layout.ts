// Where the contracts live: the committed ones the build generates, and their released baselines
// under contracts/v1 (copied there by `npm run contract:release`). Every path hangs off one root
// so the gate's tests can run it on a copy.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

export const repositoryRoot = path.resolve(__dirname, '../..');

export interface Layout {
  root: string;
  contractsDir: string;
  baselineDir: string;
  releaseFile: string;
  protoDir: string;
  protoBaselineDir: string;
  /** Each contract file and where its baseline copy lives: OpenAPI, supergraph, then the subgraphs. */
  files: { current: string; baseline: string }[];
}

export function layoutOf(root: string = repositoryRoot): Layout {
  const contractsDir = path.join(root, 'contracts');
  const baselineDir = path.join(contractsDir, 'v1');
  // The subgraphs: every service with a GraphQL schema of its own.
  const subgraphs = readdirSync(path.join(root, 'apps'))
    .filter((app) => app.endsWith('-service') && existsSync(path.join(root, 'apps', app, 'src/graphql/schema.graphql')))
    .sort()
    .map((app) => ({ current: path.join(root, 'apps', app, 'src/graphql/schema.graphql'), baseline: path.join(baselineDir, 'subgraphs', `${app.replace(/-service$/, '')}.graphql`) }));
  return {
    root,
    contractsDir,
    baselineDir,
    releaseFile: path.join(baselineDir, 'release.json'),
    protoDir: path.join(root, 'proto'),
    protoBaselineDir: path.join(baselineDir, 'proto'),
    files: [
      { current: path.join(root, 'apps/gateway/src/openapi/openapi.json'), baseline: path.join(baselineDir, 'openapi.json') },
      { current: path.join(root, 'apps/gateway/src/graphql/supergraph.graphql'), baseline: path.join(baselineDir, 'supergraph.graphql') },
      ...subgraphs,
    ],
  };
}
