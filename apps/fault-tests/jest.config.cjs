// Fault tests: the whole stack on servers of each test's own, broken on purpose under load.
// One file at a time: every case runs its stack on the same ports (FAULT_PORT_OFFSET).
module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'fault-tests',
  rootDir: __dirname,
  maxWorkers: 1,
  testTimeout: 120_000,
};
