// Two replicas of every app behind HAProxy, started once for the file (a cluster costs ten
// processes' start): first every cross-replica promise on the quiet cluster, then the rolling
// restart under load, which restarts every replica and so goes last.
import { type ClusterWorld, startClusterWorld } from './cluster-world';
import { replicaPromises } from './replica-promises';
import { rollingRestart } from './rolling-restart';

let world: ClusterWorld;

beforeAll(async () => {
  // A Redis command may wait up to a second before a gateway counts in its own memory instead
  // (50 ms by default): on a busy 2-core machine a stall that long happens, and the switch would
  // split the rate-limit budget the tests show is shared (docs/operations.md, "When Redis hangs").
  world = await startClusterWorld('tests', { REDIS_COMMAND_TIMEOUT_MS: '1000' });
}, 240_000);

afterAll(async () => {
  await world?.stop();
}, 60_000);

describe('any replica answers any request', () => replicaPromises(() => world));

describe('a rolling restart loses nothing', () => rollingRestart(() => world));
