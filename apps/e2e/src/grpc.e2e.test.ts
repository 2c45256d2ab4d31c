// The internal gRPC surface of the running stack (inventory is not exposed through the gateway).
import { credentials, makeGenericClientConstructor, Metadata, type ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { issueAccessToken, serviceTokenSource } from '@platform/auth';
import { InventoryClient, type ReserveReply } from '@platform/inventory-contract';
import { inventoryAddress } from './stack';

const jwtSecret = () => process.env.E2E_JWT_SECRET ?? '';

describe('Inventory over gRPC', () => {
  const client = new InventoryClient(inventoryAddress, credentials.createInsecure());
  afterAll(() => client.close());

  /** Metadata carrying `token` as orders-service sends it; no token when undefined. */
  const bearing = (token?: string) => {
    const metadata = new Metadata();
    if (token) metadata.set('authorization', `Bearer ${token}`);
    return metadata;
  };
  const ordersToken = () => serviceTokenSource(jwtSecret(), 'orders-service')();
  const reserve = async (orderId: string, sku: string, quantity: number, metadata?: Metadata) => {
    const sent = metadata ?? bearing(await ordersToken());
    return new Promise<ReserveReply>((resolve, reject) => client.reserve({ orderId, sku, quantity }, sent, { deadline: new Date(Date.now() + 5_000) }, (error, reply) => (error ? reject(error) : resolve(reply))));
  };

  it('reports SERVING on grpc.health.v1', async () => {
    const Health = makeGenericClientConstructor(healthService, 'Health');
    const health = new Health(inventoryAddress, credentials.createInsecure()) as unknown as { check(r: { service: string }, cb: (e: ServiceError | null, r: { status: string }) => void): void; close(): void };
    try {
      const status = await new Promise<string>((resolve, reject) => health.check({ service: 'inventory.v1.Inventory' }, (error, reply) => (error ? reject(error) : resolve(reply.status))));
      expect(status).toBe('SERVING');
    } finally {
      health.close();
    }
  });

  it('reserves idempotently and releases once', async () => {
    const orderId = `e2e-grpc-${Date.now()}`;
    const first = await reserve(orderId, 'MS-WL-002', 1);
    const retry = await reserve(orderId, 'MS-WL-002', 1);
    expect(retry.reservationId).toBe(first.reservationId);
    expect(retry.remaining).toBe(first.remaining);
    const metadata = bearing(await ordersToken());
    const released = await new Promise<number>((resolve, reject) => client.release({ orderId }, metadata, (error, reply) => (error ? reject(error) : resolve(reply.releasedCount))));
    expect(released).toBe(1);
  });

  it('answers NOT_FOUND for an unknown SKU', async () => {
    await expect(reserve('e2e-x', 'NO-SUCH-SKU', 1)).rejects.toMatchObject({ code: 5 });
  });

  it('refuses callers without a service token, with a person\'s token, or from a service it does not serve', async () => {
    const { accessToken } = await issueAccessToken(jwtSecret(), { userId: 'someone', role: 'admin' });
    await expect(reserve('e2e-thief', 'MS-WL-002', 1, bearing())).rejects.toMatchObject({ code: 16 }); // UNAUTHENTICATED
    await expect(reserve('e2e-thief', 'MS-WL-002', 1, bearing(accessToken))).rejects.toMatchObject({ code: 16 });
    await expect(reserve('e2e-thief', 'MS-WL-002', 1, bearing(await serviceTokenSource(jwtSecret(), 'users-service')()))).rejects.toMatchObject({ code: 7 }); // PERMISSION_DENIED
  });
});
