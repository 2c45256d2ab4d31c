import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Registry } from 'prom-client';
import { exportUsage, FileUsageStore, RedisUsageStore, USAGE_METRIC_SERIES, UsageRecorder, UsageReports, usageByCaller, type UsageStore } from './index';

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

  it('answers reports as usageByCaller does, reading two days per report once the older 28 are kept', async () => {
    const row = (day: string, element: string, calls: number, caller = 'user:u1') => ({ day, element, caller, client: 'shop-app/2.3.1', calls, lastUsed: `${day}T08:00:00.000Z` });
    // Today, yesterday, 3, 10 and 29 days ago (all in the 30), and 30 days ago (outside).
    await store.add([row('2026-11-24', 'rest:GET /v1/orders', 1), row('2026-11-23', 'rest:GET /v1/orders', 2), row('2026-11-21', 'rest:GET /v1/orders', 4), row('2026-11-14', 'rest:GET /v1/orders', 8)]);
    await store.add([row('2026-10-26', 'rest:GET /v1/orders', 16), row('2026-10-25', 'rest:GET /v1/orders', 32), row('2026-11-14', 'rest:GET /v1/users', 64, 'user:u2'), row('2026-11-23', 'rest:GET /v1/users', 1, 'user:u2')]);
    const wanted = (element: string) => element.startsWith('rest:GET');
    const expected = await usageByCaller(store, { today: '2026-11-24', wanted });
    expect(expected).toEqual([
      { element: 'rest:GET /v1/orders', caller: 'user:u1', client: 'shop-app/2.3.1', calls1d: 1, calls7d: 7, calls30d: 31, lastUsed: '2026-11-24T08:00:00.000Z' },
      { element: 'rest:GET /v1/users', caller: 'user:u2', client: 'shop-app/2.3.1', calls1d: 0, calls7d: 1, calls30d: 65, lastUsed: '2026-11-23T08:00:00.000Z' },
    ]);

    const reports = new UsageReports(store);
    const read = jest.spyOn(store, 'read');
    expect(await reports.usage({ today: '2026-11-24', wanted, elements: 'rest:GET' })).toEqual(expected);
    expect(read.mock.calls.sort()).toEqual([['2026-10-26', '2026-11-22'], ['2026-11-23', '2026-11-24']]);
    // Another call today: only yesterday and today are read again, and it counts.
    await store.add([row('2026-11-24', 'rest:GET /v1/orders', 100)]);
    read.mockClear();
    expect((await reports.usage({ today: '2026-11-24', wanted, elements: 'rest:GET' }))[0]).toMatchObject({ calls1d: 101, calls7d: 107, calls30d: 131 });
    expect(read.mock.calls).toEqual([['2026-11-23', '2026-11-24']]);
    // One caller's report: its own uses, summed the same way.
    expect(await reports.usage({ today: '2026-11-24', wanted, elements: 'rest:GET', caller: 'user:u2' })).toEqual([expected[1]]);
    expect(await reports.usage({ today: '2026-11-24', wanted, elements: 'rest:GET', caller: 'user:nobody' })).toEqual([]);
    // A new day, or other elements, sums the kept days again.
    read.mockClear();
    expect((await reports.usage({ today: '2026-11-25', wanted, elements: 'rest:GET' }))[0]).toMatchObject({ calls1d: 0, calls7d: 107, calls30d: 115 });
    expect(read.mock.calls.sort()).toEqual([['2026-10-27', '2026-11-23'], ['2026-11-24', '2026-11-25']]);
    read.mockRestore();
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

describe('usage records one caller cannot inflate', () => {
  it('counts a caller’s clients past the per-caller cap as `other`, so a fresh X-Client-Version per request adds no rows', async () => {
    const store = new FileUsageStore(mkdtempSync(path.join(tmpdir(), 'usage-')));
    const recorder = new UsageRecorder(store, { now: () => NOON, maxClientsPerCaller: 5 });
    for (let index = 0; index < 1_000; index++) recorder.record({ caller: 'user:u1', client: `app/${index}.0` }, ['rest:GET /v1/orders', 'rest:GET /v1/orders query.size']);
    await recorder.flush();
    // Later flushes the same day keep to the same cap; the clients admitted first stay themselves.
    recorder.record({ caller: 'user:u1', client: 'app/2.0' }, ['rest:GET /v1/orders']);
    recorder.record({ caller: 'user:u1', client: 'app/5000.0' }, ['rest:GET /v1/orders']);
    await recorder.flush();
    const rows = await store.read('2026-11-24', '2026-11-24');
    const clients = new Set(rows.map((row) => row.client));
    expect(clients.size).toBe(6);
    expect(clients.has('other')).toBe(true);
    expect(rows.find((row) => row.client === 'app/2.0' && row.element === 'rest:GET /v1/orders')?.calls).toBe(2);
    expect(rows.find((row) => row.client === 'other' && row.element === 'rest:GET /v1/orders')?.calls).toBe(996);
    // Another caller has clients of its own.
    recorder.record({ caller: 'user:u2', client: 'app/9.0' }, ['rest:GET /v1/orders']);
    await recorder.flush();
    expect((await store.read('2026-11-24', '2026-11-24')).some((row) => row.caller === 'user:u2' && row.client === 'app/9.0')).toBe(true);
  });

  it('keeps anonymous, self-named callers from filling the day’s caller cap, so signed-in callers keep their names', async () => {
    const store = new FileUsageStore(mkdtempSync(path.join(tmpdir(), 'usage-')));
    const recorder = new UsageRecorder(store, { now: () => NOON, maxCallersPerDay: 100, maxSelfNamedCallersPerDay: 10 });
    for (let index = 0; index < 500; index++) recorder.record({ caller: `client:squat${index}/1.0.0`, client: `squat${index}/1.0.0` }, ['rest:GET /v1/openapi.json']);
    await recorder.flush();
    recorder.record({ caller: 'user:u1', client: 'shop-app/2.3.1' }, ['rest:GET /v1/orders']);
    await recorder.flush();
    const uses = await usageByCaller(store, { today: '2026-11-24', wanted: () => true });
    expect(uses.filter((use) => use.caller.startsWith('client:'))).toHaveLength(10);
    expect(uses.find((use) => use.caller === 'other')?.calls1d).toBe(490);
    expect(uses.some((use) => use.caller === 'user:u1')).toBe(true);
  });

  it('reads a day of 200,000 distinct rows from files without overflowing the stack', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'usage-'));
    const lines = Array.from({ length: 200_000 }, (_, index) => JSON.stringify({ e: 'rest:GET /v1/orders', c: 'user:u1', k: `app/${index}`, n: 1, t: '2026-11-24T12:00:00.000Z' }));
    writeFileSync(path.join(dir, '2026-11-24.jsonl'), `${lines.join('\n')}\n`);
    const store = new FileUsageStore(dir);
    expect(await store.read('2026-11-23', '2026-11-24')).toHaveLength(200_000);
  }, 60_000);

  it('writes a flush of 100,000 rows to files in time linear in its size', async () => {
    const store = new FileUsageStore(mkdtempSync(path.join(tmpdir(), 'usage-')));
    const rows = Array.from({ length: 100_000 }, (_, index) => ({ day: '2026-11-24', element: 'rest:GET /v1/orders', caller: 'user:u1', client: `app/${index}`, calls: 1, lastUsed: '2026-11-24T12:00:00.000Z' }));
    const started = Date.now();
    await store.add(rows);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 60_000);
});
