// The gateway's usage recording step alone, in process, on and off side by side: the work a hop
// pays for it (checking and stripping `fields`, reading the body's fields, naming the caller,
// counting in memory), with no network or other process to blur it. Prints per-request time at
// p50 and p99 over rounds that alternate on and off. Usage: node tools/ts-run.mjs tools/bench/usage-recording.ts [requests per round]
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Registry } from 'prom-client';
import { emptyUsageStore, UsageRecorder } from '@platform/usage';
/* eslint-disable @nx/enforce-module-boundaries */
import { operationUsageOf, recordRestUsage, type OpenApiDocument } from '../../apps/gateway/src/usage/recording';
/* eslint-enable @nx/enforce-module-boundaries */

export async function main(): Promise<void> {
  const perRound = Number(process.argv[2] ?? 20_000);
  const openapi = JSON.parse(readFileSync(path.resolve(__dirname, '../../apps/gateway/src/openapi/openapi.json'), 'utf8')) as OpenApiDocument;
  const operations = operationUsageOf(openapi);
  const recorder = new UsageRecorder(emptyUsageStore, { registry: new Registry() }).start();
  const cases = [
    { name: 'GET /v1/orders/{id}?fields=id,status', method: 'GET', pattern: '/orders/:id', url: '/v1/orders/0193/?include=amountDetail&fields=id,status', body: undefined },
    { name: 'GET /v1/products/{id} (every field counts)', method: 'GET', pattern: '/products/:id', url: '/v1/products/0193', body: undefined },
    { name: 'POST /v1/orders (body fields)', method: 'POST', pattern: '/orders', url: '/v1/orders', body: Buffer.from(JSON.stringify({ items: [{ productId: 'a', quantity: 1 }, { productId: 'b', quantity: 2 }], couponCode: 'WELCOME-10' })) },
  ];
  const handlers = { on: recordRestUsage(recorder, operations), off: recordRestUsage(undefined, operations) };
  /** One request through the step, answered: ns. */
  const once = (handler: typeof handlers.on, item: (typeof cases)[number], index: number): number => {
    const res = Object.assign(new EventEmitter(), { statusCode: 200, locals: { route: { pattern: item.pattern, upstream: 'orders' }, principal: { userId: `user-${index % 500}`, role: 'customer' }, forwardBody: item.body } });
    const req = { method: item.method, originalUrl: item.url, url: item.url.slice(3), headers: { 'x-client-name': 'shop-app', 'x-client-version': '3.2.1' } };
    const started = process.hrtime.bigint();
    handler(req as never, res as never, () => undefined);
    res.emit('finish');
    return Number(process.hrtime.bigint() - started);
  };
  const rows = [];
  for (const item of cases) {
    const samples = { on: [] as number[], off: [] as number[] };
    for (let i = 0; i < 2_000; i++) {
      once(handlers.on, item, i);
      once(handlers.off, item, i);
    }
    for (let round = 0; round < 5; round++) for (let i = 0; i < perRound; i++) for (const mode of ['on', 'off'] as const) samples[mode].push(once(handlers[mode], item, i));
    const at = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.floor(values.length * q)] / 1000;
    rows.push({ case: item.name, 'p50 µs off': at(samples.off, 0.5).toFixed(1), 'p50 µs on': at(samples.on, 0.5).toFixed(1), 'p99 µs off': at(samples.off, 0.99).toFixed(1), 'p99 µs on': at(samples.on, 0.99).toFixed(1), 'p99 added µs': (at(samples.on, 0.99) - at(samples.off, 0.99)).toFixed(1) });
    await recorder.flush();
  }
  await recorder.stop();
  console.table(rows);
}
