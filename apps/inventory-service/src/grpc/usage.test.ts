// RPC usage over real gRPC, as a service team reads it from the store: the RPC and each request
// field a calling service sent (not the ones left at their default), per calling service; the
// fields of nested messages too, at any depth and in every item of a repeated field, each named
// by its own message (`proto:<package>.<Message>.<field>`), as the registry and the gate name it.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { create } from '@bufbuild/protobuf';
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { credentials, makeGenericClientConstructor, Metadata, Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { InventoryClient } from '@platform/inventory-contract';
import { createMetrics } from '@platform/service-kit';
import { FileUsageStore, RedisUsageStore, UsageRecorder, usageByCaller, type UsageStore } from '@platform/usage';
import type { StockService } from '../stock/service';
import { bearing, callers, ordersToken } from '../testing/callers';
import { authenticateCall } from './caller';
import { createInventoryGrpc } from './server';
import { methodUsageOf, recordRpcUsage } from './usage';

// The shared store as deployed: Redis (TEST_REDIS_URL, under a prefix of this test's own) or files.
const openStore = (): UsageStore => (process.env.TEST_REDIS_URL ? RedisUsageStore.connect(process.env.TEST_REDIS_URL, `usage:test:${randomUUID()}`) : new FileUsageStore(mkdtempSync(path.join(tmpdir(), 'inventory-usage-'))));
const today = new Date().toISOString().slice(0, 10);

let recorder: UsageRecorder;
const usedBy = async (caller: string) => {
  await recorder.flush();
  return (await usageByCaller(recorder.store, { today, wanted: () => true, caller })).map((use) => use.element).sort();
};

beforeEach(() => {
  recorder = new UsageRecorder(openStore());
});
afterEach(async () => recorder.store.close());

it('records the RPC and the request fields a service sent, not the ones left at their default', async () => {
  const level = { sku: 'SKU-1', onHand: 3, reserved: 0, available: 3, version: 1 };
  const stock = { adjustStock: async () => level } as unknown as StockService;
  const metrics = createMetrics('inventory-usage');
  const grpc = createInventoryGrpc({ stock, callers, logger: pino({ level: 'silent' }, new Writable({ write: (_c, _e, done) => done() })), registry: metrics.registry, usage: recorder });
  const client = new InventoryClient(`127.0.0.1:${await grpc.listen(0, '127.0.0.1')}`, credentials.createInsecure(), { interceptors: [bearing(await ordersToken())] });
  try {
    await new Promise((resolve, reject) => client.adjustStock({ sku: 'SKU-1', delta: 2, reason: '', requestId: 'r-1', changeReason: 'recount' }, (error, reply) => (error ? reject(error) : resolve(reply))));
    expect(await usedBy('service:orders-service')).toEqual([
      'proto:inventory.v1.AdjustStockRequest.change_reason',
      'proto:inventory.v1.AdjustStockRequest.delta',
      'proto:inventory.v1.AdjustStockRequest.request_id',
      'proto:inventory.v1.AdjustStockRequest.sku',
      'proto:inventory.v1.Inventory.AdjustStock',
    ]);
  } finally {
    client.close();
    grpc.server.forceShutdown();
  }
});

describe('nested messages', () => {
  // The inventory contract's requests hold no message today; a contract of the test's own does:
  // Place(PlaceRequest { order: Order { id, lines: [Line { sku, quantity, note: Note { text } }], gift: Note }, tags: map<string, string> }).
  const field = (name: string, number: number, type: FieldDescriptorProto_Type, extra: { typeName?: string; repeated?: boolean } = {}) => ({
    name,
    number,
    jsonName: name,
    type,
    typeName: extra.typeName ?? '',
    label: extra.repeated ? FieldDescriptorProto_Label.REPEATED : FieldDescriptorProto_Label.OPTIONAL,
  });
  const { STRING, INT32, MESSAGE } = FieldDescriptorProto_Type;
  const file = create(FileDescriptorProtoSchema, {
    name: 'inventory/test/nested.proto',
    package: 'inventory.test',
    messageType: [
      {
        name: 'PlaceRequest',
        field: [field('order', 1, MESSAGE, { typeName: '.inventory.test.Order' }), field('tags', 2, MESSAGE, { typeName: '.inventory.test.PlaceRequest.TagsEntry', repeated: true })],
        nestedType: [{ name: 'TagsEntry', field: [field('key', 1, STRING), field('value', 2, STRING)], options: { mapEntry: true } }],
      },
      { name: 'Order', field: [field('id', 1, STRING), field('lines', 2, MESSAGE, { typeName: '.inventory.test.Order.Line', repeated: true }), field('gift', 3, MESSAGE, { typeName: '.inventory.test.Note' })], nestedType: [{ name: 'Line', field: [field('sku', 1, STRING), field('quantity', 2, INT32), field('note', 3, MESSAGE, { typeName: '.inventory.test.Note' })] }] },
      { name: 'Note', field: [field('text', 1, STRING)] },
      { name: 'PlaceReply', field: [] },
    ],
    service: [{ name: 'Orders', method: [{ name: 'Place', inputType: '.inventory.test.PlaceRequest', outputType: '.inventory.test.PlaceReply' }] }],
  });
  // JSON on the wire: what the interceptor sees is the decoded object, whatever the codec.
  const json = { serialize: (value: unknown) => Buffer.from(JSON.stringify(value)), deserialize: (bytes: Buffer) => JSON.parse(bytes.toString('utf8')) as unknown };
  const definition: ServiceDefinition = {
    Place: { path: '/inventory.test.Orders/Place', requestStream: false, responseStream: false, requestSerialize: json.serialize, requestDeserialize: json.deserialize, responseSerialize: json.serialize, responseDeserialize: json.deserialize },
  };

  async function place(request: unknown): Promise<void> {
    const server = new Server({ interceptors: [recordRpcUsage(recorder, methodUsageOf([file]))] });
    // Its handler verifies the caller's token first, as every Inventory handler does.
    server.addService(definition, {
      Place: (call: { metadata: Metadata }, callback: (error: null, reply: object) => void) => void authenticateCall(call.metadata, callers).then(() => callback(null, {})),
    } as UntypedServiceImplementation);
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    const Client = makeGenericClientConstructor(definition, 'Orders');
    const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as { Place(request: unknown, metadata: Metadata, callback: (error: Error | null) => void): void; close(): void };
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${await ordersToken()}`);
    try {
      await new Promise<void>((resolve, reject) => client.Place(request, metadata, (error) => (error ? reject(error) : resolve())));
    } finally {
      client.close();
      server.forceShutdown();
    }
  }

  it('records the fields of nested messages by their own message, in every item of a repeated field', async () => {
    await place({ order: { id: 'o-1', lines: [{ sku: 'SKU-1', quantity: 0 }, { sku: 'SKU-2', quantity: 2, note: { text: 'fragile' } }] }, tags: { channel: 'web' } });
    expect(await usedBy('service:orders-service')).toEqual([
      'proto:inventory.test.Note.text',
      'proto:inventory.test.Order.Line.note',
      'proto:inventory.test.Order.Line.quantity',
      'proto:inventory.test.Order.Line.sku',
      'proto:inventory.test.Order.id',
      'proto:inventory.test.Order.lines',
      'proto:inventory.test.Orders.Place',
      'proto:inventory.test.PlaceRequest.order',
      // A map's keys are data: the map counts, not what it holds.
      'proto:inventory.test.PlaceRequest.tags',
    ]);
  });

  it('counts a nested message sent empty as sent, and nothing inside it', async () => {
    await place({ order: { gift: {} } });
    expect(await usedBy('service:orders-service')).toEqual(['proto:inventory.test.Order.gift', 'proto:inventory.test.Orders.Place', 'proto:inventory.test.PlaceRequest.order']);
  });
});
