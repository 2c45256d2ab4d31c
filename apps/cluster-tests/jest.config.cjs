// Cluster tests: two replicas of every app behind HAProxy, on servers of their own, driven
// through HAProxy as clients would (one cluster, in cluster.test.ts, on CLUSTER_PORT_OFFSET).
module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'cluster-tests',
  rootDir: __dirname,
  maxWorkers: 1,
  testTimeout: 60_000,
};
