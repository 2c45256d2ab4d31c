// The internal gRPC surface of the running stack (inventory is not exposed through the gateway).
import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { InventoryClient, type ReserveReply } from '@platform/inventory-contract';
import { inventoryAddress } from './stack';

describe('Inventory over gRPC', () => {
  const client = new InventoryClient(inventoryAddress, credentials.createInsecure());
  afterAll(() => client.close());

  const reserve = (orderId: string, sku: string, quantity: number) =>
    new Promise<ReserveReply>((resolve, reject) => client.reserve({ orderId, sku, quantity }, new Metadata(), { deadline: new Date(Date.now() + 5_000) }, (error, reply) => (error ? reject(error) : resolve(reply))));

  it('reports SERVING on grpc.health.v1', async () => {
    const Health = makeGenericClientConstructor(healthService, 'Health');
    const health = new Health(inventoryAddress, credentials.createInsecure()) as unknown as { check(r: { service: string }, cb: (e: ServiceError | null, r: { status: string }) => void): void; close(): void };
    const status = await new Promise<string>((resolve, reject) => health.check({ service: 'inventory.v1.Inventory' }, (error, reply) => (error ? reject(error) : resolve(reply.status))));
    expect(status).toBe('SERVING');
    health.close();
  });

  it('reserves idempotently and releases once', async () => {
    const orderId = `e2e-grpc-${Date.now()}`;
    const first = await reserve(orderId, 'MS-WL-002', 1);
    const retry = await reserve(orderId, 'MS-WL-002', 1);
    expect(retry.reservationId).toBe(first.reservationId);
    expect(retry.remaining).toBe(first.remaining);
    const released = await new Promise<number>((resolve, reject) => client.release({ orderId }, (error, reply) => (error ? reject(error) : resolve(reply.releasedCount))));
    expect(released).toBe(1);
  });

  it('answers NOT_FOUND for an unknown SKU', async () => {
    await expect(reserve('e2e-x', 'NO-SUCH-SKU', 1)).rejects.toMatchObject({ code: 5 });
  });
});
