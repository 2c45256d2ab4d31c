// Jest runs globalSetup and globalTeardown outside its own module system, where moduleNameMapper
// does not reach (jestjs/jest#11644). This resolves the workspace libraries' import paths
// (tsconfig.base.json `paths`, the map the preset gives the tests) for the plain requires of the
// jest process too. Required by the jest configs whose global setup imports a library.
const Module = require('node:module');
const path = require('node:path');
const { readFileSync } = require('node:fs');

const root = path.resolve(__dirname, '../..');
const { compilerOptions } = JSON.parse(readFileSync(path.join(root, 'tsconfig.base.json'), 'utf8'));
const libraries = new Map(Object.entries(compilerOptions.paths).map(([alias, [target]]) => [alias, path.join(root, target)]));
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function resolveWorkspaceLibrary(request, ...rest) {
  return resolveFilename.call(this, libraries.get(request) ?? request, ...rest);
};
