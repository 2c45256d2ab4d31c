// The whole stack, started once for the suite, driven as a client would.
require('../../libs/test-kit/workspace-libs.cjs'); // the global setup starts it with @platform/test-kit
module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'e2e',
  rootDir: __dirname,
  globalSetup: '<rootDir>/src/global-setup.ts',
  globalTeardown: '<rootDir>/src/global-teardown.ts',
  testSequencer: '<rootDir>/logs-last.cjs',
  maxWorkers: 1,
  testTimeout: 60_000,
};
