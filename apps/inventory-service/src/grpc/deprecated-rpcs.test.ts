// Deprecated RPCs over real gRPC: the deprecation metadata on a call to one, UNIMPLEMENTED in its
// brownout and after its sunset, a dry run that passes and is counted, and nothing for other RPCs.
import { Writable } from 'node:stream';
import pino from 'pino';
import { credentials, Metadata, status } from '@grpc/grpc-js';
import type { Deprecation } from '@platform/deprecations';
import { InventoryClient } from '@platform/inventory-contract';
import { createMetrics } from '@platform/service-kit';
import { bearing, callers, failure, ordersToken } from '../testing/callers';
import type { StockService } from '../stock/service';
import { createInventoryGrpc } from './server';

const always = [{ start: '2020-01-01T00:00:00.000Z', end: '2098-01-01T00:00:00.000Z', dryRun: false }];
const entry = (element: string, extra: Partial<Deprecation> = {}): Deprecation => ({ element, replacement: 'proto:inventory.v1.Inventory.ReserveStream', announced: '2026-06-01', sunset: '2099-06-01', notice: 'https://docs.example.com/changes/rpc', brownouts: [], ...extra });
const registry = [
  entry('proto:inventory.v1.Inventory.GetStock'),
  entry('proto:inventory.v1.Inventory.Release', { brownouts: always }),
  entry('proto:inventory.v1.Inventory.SetStock', { brownouts: [{ ...always[0], dryRun: true }] }),
  entry('proto:inventory.v1.Inventory.AdjustStock', { announced: '2020-01-01', sunset: '2021-01-01', replacement: 'proto:inventory.v1.Inventory.SetStock' }),
];
// No database: the stock service answers from memory; what is under test is in front of it.
const level = { sku: 'SKU-1', onHand: 3, reserved: 0, available: 3, version: 1 };
const stock = { getStock: async () => [level], release: async () => 1, setStock: async () => level, adjustStock: async () => level } as unknown as StockService;

const logs: Record<string, unknown>[] = [];
const metrics = createMetrics('inventory-deprecations');
const grpc = createInventoryGrpc({ stock, callers, logger: pino({ level: 'info' }, new Writable({ write: (chunk, _e, done) => (logs.push(JSON.parse(String(chunk))), done()) })), registry: metrics.registry, deprecations: registry });
let client: InventoryClient;

beforeAll(async () => {
  client = new InventoryClient(`127.0.0.1:${await grpc.listen(0, '127.0.0.1')}`, credentials.createInsecure(), { interceptors: [bearing(await ordersToken())] });
});
afterAll(() => {
  client?.close();
  grpc.server.forceShutdown();
});

/** A unary call's reply and response metadata, or its error. */
function unary<T>(method: 'getStock' | 'release' | 'setStock' | 'adjustStock', request: unknown): Promise<{ reply: T; metadata: Metadata }> {
  return new Promise((resolve, reject) => {
    let metadata = new Metadata();
    const send = client[method] as unknown as (request: unknown, callback: (error: Error | null, reply: T) => void) => { on(event: 'metadata', listener: (received: Metadata) => void): void };
    const call = send.call(client, request, (error, reply) => (error ? reject(error) : resolve({ reply, metadata })));
    call.on('metadata', (received) => (metadata = received));
  });
}

const counted = async (element: string, outcome: string) => (await metrics.registry.getSingleMetric('grpc_deprecated_rpc_calls_total')?.get())?.values.find((value) => value.labels.element === element && value.labels.outcome === outcome)?.value ?? 0;

it('answers a deprecated RPC with deprecation, sunset and link metadata', async () => {
  const { reply, metadata } = await unary<{ levels: unknown[] }>('getStock', { skus: ['SKU-1'] });
  expect(reply.levels).toHaveLength(1);
  expect(metadata.get('deprecation')).toEqual([`@${Date.parse('2026-06-01T00:00:00Z') / 1000}`]);
  expect(metadata.get('sunset')).toEqual(['Mon, 01 Jun 2099 00:00:00 GMT']);
  expect(metadata.get('link')).toEqual(['<https://docs.example.com/changes/rpc>; rel="deprecation"; type="text/html"']);
  expect(await counted('proto:inventory.v1.Inventory.GetStock', 'warned')).toBe(1);
});

it('refuses a deprecated RPC in its brownout with UNIMPLEMENTED, naming the replacement, and logs it', async () => {
  const error = await failure(unary('release', { orderId: 'o1' }));
  expect(error.code).toBe(status.UNIMPLEMENTED);
  expect(error.details).toContain('use inventory.v1.Inventory.ReserveStream instead');
  expect(error.metadata.get('sunset')).toEqual(['Mon, 01 Jun 2099 00:00:00 GMT']);
  expect(await counted('proto:inventory.v1.Inventory.Release', 'brownout')).toBe(1);
  expect(logs.find((line) => line.msg === 'deprecated RPC refused (brownout)')).toMatchObject({ deprecation: { element: 'proto:inventory.v1.Inventory.Release' }, grpcMethod: '/inventory.v1.Inventory/Release' });
  // Named as the usage records and GET /v1/deprecations name a calling service: its token's subject and its client name/version.
  expect(logs.find((line) => line.msg === 'deprecated RPC refused (brownout)')).toMatchObject({ caller: 'service:orders-service', client: expect.stringMatching(/^grpc-node-js\/\d/) });
});

it('passes a dry-run call and counts it; refuses an RPC past its sunset', async () => {
  const { reply } = await unary<{ level: unknown }>('setStock', { sku: 'SKU-1', onHand: 3, requestId: 'r1' });
  expect(reply.level).toMatchObject({ sku: 'SKU-1' });
  expect(await counted('proto:inventory.v1.Inventory.SetStock', 'dry_run')).toBe(1);
  expect(logs.find((line) => (line.deprecation as { outcome?: string } | undefined)?.outcome === 'dry_run')).toMatchObject({ caller: 'service:orders-service', client: expect.stringMatching(/^grpc-node-js\/\d/) });
  const error = await failure(unary('adjustStock', { sku: 'SKU-1', delta: 1, reason: 'x', requestId: 'r2' }));
  expect([error.code, error.details]).toEqual([status.UNIMPLEMENTED, 'inventory.v1.Inventory.AdjustStock was retired on 2021-01-01: use inventory.v1.Inventory.SetStock instead. See https://docs.example.com/changes/rpc.']);
});

describe('a deprecated request field (AdjustStockRequest.reason)', () => {
  /** A server whose registry has the field's entry, and what its handler was asked. */
  async function serverWith(extra: Partial<Deprecation>) {
    const asked: Record<string, unknown>[] = [];
    const recording = { adjustStock: async (request: Record<string, unknown>) => (asked.push(request), level) } as unknown as StockService;
    const fieldMetrics = createMetrics('inventory-deprecated-fields');
    const fields = [entry('proto:inventory.v1.AdjustStockRequest.reason', { replacement: 'proto:inventory.v1.AdjustStockRequest.change_reason', ...extra })];
    const server = createInventoryGrpc({ stock: recording, callers, logger: pino({ level: 'silent' }), registry: fieldMetrics.registry, deprecations: fields });
    const fieldClient = new InventoryClient(`127.0.0.1:${await server.listen(0, '127.0.0.1')}`, credentials.createInsecure(), { interceptors: [bearing(await ordersToken())] });
    const adjust = (request: Record<string, unknown>) =>
      new Promise<Metadata>((resolve, reject) => {
        let metadata = new Metadata();
        const call = fieldClient.adjustStock({ sku: 'SKU-1', delta: 1, requestId: `r-${asked.length}`, reason: '', changeReason: '', ...request }, (error) => (error ? reject(error) : resolve(metadata)));
        call.on('metadata', (received) => (metadata = received));
      });
    return { asked, adjust, close: () => (fieldClient.close(), server.server.forceShutdown()) };
  }

  it('answers a request carrying it with the deprecation metadata, and one without it with none', async () => {
    const field = await serverWith({});
    try {
      const old = await field.adjust({ reason: 'a delivery' });
      expect(old.get('sunset')).toEqual(['Mon, 01 Jun 2099 00:00:00 GMT']);
      expect(old.get('deprecation')).toEqual([`@${Date.parse('2026-06-01T00:00:00Z') / 1000}`]);
      expect(field.asked[0]).toMatchObject({ reason: 'a delivery' });
      const moved = await field.adjust({ changeReason: 'a delivery' });
      expect(moved.get('deprecation')).toEqual([]);
    } finally {
      field.close();
    }
  });

  it('in a brownout, clears the field before the handler sees it, as a server without it would, and the call goes on', async () => {
    const field = await serverWith({ brownouts: always });
    try {
      const metadata = await field.adjust({ reason: 'a delivery' });
      expect(metadata.get('sunset')).toEqual(['Mon, 01 Jun 2099 00:00:00 GMT']);
      expect(field.asked[0].reason ?? '').toBe('');
    } finally {
      field.close();
    }
  });
});
