import { Counter, Registry } from 'prom-client';
import { ClientChosenLabel, dropSeries } from './metrics';

describe('ClientChosenLabel', () => {
  it('gives one caller at most its share of values; past it, and past the places, `other`', () => {
    const label = new ClientChosenLabel(4, 2);
    expect(['a/1', 'a/2', 'a/3'].map((value) => label.valueOf(value, 'mallory'))).toEqual(['a/1', 'a/2', 'other']);
    expect(label.valueOf('a/1', 'mallory')).toBe('a/1');
    expect(['b/1', 'b/2'].map((value) => label.valueOf(value, 'bob'))).toEqual(['b/1', 'b/2']);
    // Full, and c/1 is sent by one caller only, as each held value was: it waits as `other`.
    expect(label.valueOf('c/1', 'carol')).toBe('other');
  });

  it('keeps the places for what many callers send: forty accounts with made-up values cannot hide a release a few users run', () => {
    const evicted: string[] = [];
    const label = new ClientChosenLabel(200, 5, (value) => evicted.push(value));
    // Established before the flood, sent by several users.
    for (const user of ['u1', 'u2', 'u3']) expect(label.valueOf('shop-app/3.0.0', user)).toBe('shop-app/3.0.0');
    expect(label.valueOf('tool/1.0', 'u4')).toBe('tool/1.0');
    // 45 accounts, each vouching for its five made-up values: every other place taken.
    for (let account = 0; account < 45; account++) for (let i = 0; i < 5; i++) label.valueOf(`sybil${account}x${i}/1.0`, `sybil${account}`);
    expect(label.valueOf('shop-app/3.1.0', 'u5')).toBe('other');
    // A second user of the release: it now beats a made-up value, the newest of the weakest.
    expect(label.valueOf('shop-app/3.1.0', 'u6')).toBe('shop-app/3.1.0');
    expect(evicted).toEqual([expect.stringMatching(/^sybil\d+x\d\/1\.0$/)]);
    // What was there before the flood keeps its place, and the release keeps its own.
    expect([label.valueOf('shop-app/3.0.0', 'u1'), label.valueOf('tool/1.0', 'u4'), label.valueOf('shop-app/3.1.0', 'u5')]).toEqual(['shop-app/3.0.0', 'tool/1.0', 'shop-app/3.1.0']);
    // The flood's evicted value does not come back on its own account's word.
    expect(label.valueOf(evicted[0], evicted[0].replace(/x\d\/1\.0$/, ''))).toBe('other');
  });

  it('never waits for more values than it has places, however many one flood names', () => {
    const label = new ClientChosenLabel(10, 1);
    for (let account = 0; account < 1_000; account++) label.valueOf(`v${account}/1`, `a${account}`);
    const internals = label as unknown as { held: Map<string, unknown>; waiting: Map<string, unknown>; vouchedBy: Map<string, unknown> };
    expect([internals.held.size, internals.waiting.size]).toEqual([10, 10]);
    expect(internals.vouchedBy.size).toBe(20);
  });
});

describe('dropSeries', () => {
  it('removes every series carrying the value, and only those', async () => {
    const registry = new Registry();
    const counter = new Counter({ name: 'test_total', help: 'test', labelNames: ['route', 'client'], registers: [registry] });
    counter.inc({ route: '/a', client: 'gone/1' });
    counter.inc({ route: '/b', client: 'gone/1' });
    counter.inc({ route: '/a', client: 'kept/1' });
    await dropSeries(counter, 'client', 'gone/1');
    expect((await counter.get()).values.map(({ labels }) => labels)).toEqual([{ route: '/a', client: 'kept/1' }]);
  });
});
