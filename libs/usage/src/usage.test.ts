import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { exportUsage, FileUsageStore, RedisUsageStore, USAGE_METRIC_SERIES, UsageRecorder, usageByCaller, type UsageStore } from './index';

const NOON = Date.parse('2026-11-24T12:00:00Z');
const mobile = { caller: 'user:u1', client: 'shop-app/2.3.1' };

async function seriesCount(registry: Registry): Promise<number> {
  const metrics = await registry.getMetricsAsJSON();
  return metrics.reduce((sum, metric) => sum + metric.values.length, 0);
}

const stores: [string, () => UsageStore][] = [['files under DATA_DIR', () => new FileUsageStore(mkdtempSync(path.join(tmpdir(), 'usage-')))]];
if (process.env.TEST_REDIS_URL) stores.push(['Redis', () => RedisUsageStore.connect(process.env.TEST_REDIS_URL as string, `usage:test:${randomUUID()}`)]);

describe.each(stores)('usage store on %s', (_name, open) => {
  let store: UsageStore;
  beforeEach(() => (store = open()));
  afterEach(() => store.close());

  it('sums the flushes of two recorders (two replicas) per caller and day, and reports 1/7/30-day counts', async () => {
    let now = NOON;
    const replicaA = new UsageRecorder(store, { now: () => now });
    const replicaB = new UsageRecorder(store, { now: () => now });
    replicaA.record(mobile, ['rest:GET /v1/orders', 'rest:GET /v1/orders query.offset']);
    replicaB.record(mobile, ['rest:GET /v1/orders query.offset']);
    await Promise.all([replicaA.flush(), replicaB.flush()]);
    now = NOON - 3 * 86_400_000; // three days ago
    replicaA.record(mobile, ['rest:GET /v1/orders query.offset']);
    await replicaA.flush();

    const uses = await usageByCaller(store, { today: '2026-11-24', wanted: (element) => element.endsWith('query.offset') });
    expect(uses).toEqual([{ element: 'rest:GET /v1/orders query.offset', caller: 'user:u1', client: 'shop-app/2.3.1', calls1d: 2, calls7d: 3, calls30d: 3, lastUsed: '2026-11-24T12:00:00.000Z' }]);

    const exported = await exportUsage(store, NOON);
    expect(exported.elements['rest:GET /v1/orders query.offset']).toEqual({ lastUsed: '2026-11-24T12:00:00.000Z', callers: [{ caller: 'user:u1 (shop-app/2.3.1)', calls: 3, lastUsed: '2026-11-24T12:00:00.000Z' }] });
    // The day recording began (the first flush), not the oldest day a row names.
    expect(exported.recordedSince).toBe('2026-11-24');
  });

  it('counts callers past the day cap as `other`, and keeps its Prometheus series fixed with 10,000 distinct clients', async () => {
    const registry = new Registry();
    const recorder = new UsageRecorder(store, { now: () => NOON, maxCallersPerDay: 100, registry });
    const before = await seriesCount(registry);
    for (let index = 0; index < 10_000; index++) recorder.record({ caller: `client:app-${index}/1.0`, client: `app-${index}/1.0` }, ['graphql:Query.orders']);
    await recorder.flush();
    expect(before).toBe(USAGE_METRIC_SERIES);
    expect(await seriesCount(registry)).toBe(USAGE_METRIC_SERIES);

    const uses = await usageByCaller(store, { today: '2026-11-24', wanted: () => true });
    expect(uses).toHaveLength(101);
    expect(uses.find((use) => use.caller === 'other')?.calls1d).toBe(9_900);
    // A caller admitted earlier in the day is still itself.
    recorder.record({ caller: 'client:app-5/1.0', client: 'app-5/1.0' }, ['graphql:Query.orders']);
    await recorder.flush();
    expect((await usageByCaller(store, { today: '2026-11-24', wanted: () => true, caller: 'client:app-5/1.0' }))[0].calls1d).toBe(2);
  });
});

describe('usage recorder', () => {
  it('keeps the counts when the store fails, and writes them at the next flush', async () => {
    const store = new FileUsageStore(mkdtempSync(path.join(tmpdir(), 'usage-')));
    const add = jest.spyOn(store, 'add').mockRejectedValueOnce(new Error('store down'));
    const recorder = new UsageRecorder(store, { now: () => NOON, onError: () => undefined });
    recorder.record(mobile, ['proto:inventory.v1.Inventory.Reserve']);
    await recorder.flush();
    recorder.record(mobile, ['proto:inventory.v1.Inventory.Reserve']);
    await recorder.stop();
    expect(add).toHaveBeenCalledTimes(2);
    const uses = await usageByCaller(store, { today: '2026-11-24', wanted: () => true });
    expect(uses.map((use) => use.calls1d)).toEqual([2]);
  });
});
