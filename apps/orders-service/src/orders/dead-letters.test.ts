// An operator's view of orders-service's dead letters, through the command they would type: a
// user.deleted that could not be handled waits, `npm run events:dead-letters -- list` shows it,
// and `replay <id>` hands it to the real handler, which cancels the user's open order.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { deadLettersOf, toCloudEvent } from '@platform/events';
import { newId } from '@platform/ids';
import { createLogger } from '@platform/service-kit';
import { apiClient, tokenFor } from '@platform/test-kit';
import { PrismaClient } from '../generated/prisma/client';
import { type OrdersWithFakes, startOrdersWithFakes } from '../testing/fakes';

const JWT_SECRET = 'orders-dead-letters-secret-orders-dead-0123';
const root = path.resolve(__dirname, '../../../..');
let database: Database<PrismaClient>;
let orders: OrdersWithFakes;
const call = apiClient(() => orders.server.url);

/** Runs the operators' command against this test's orders-service, as an operator with its JWT_SECRET would. */
async function deadLettersCommand(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [path.join(root, 'tools/ts-run.mjs'), 'tools/events/dead-letters.ts', ...args], {
      cwd: root,
      env: { ...process.env, ORDERS_URL: orders.server.url, JWT_SECRET },
      timeout: 120_000,
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout: string; stderr: string; code: number };
    return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
  }
}

beforeAll(async () => {
  database = await openTestDatabase({ service: 'orders_dead_letters', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
  orders = await startOrdersWithFakes(database.prisma, { jwtSecret: JWT_SECRET, name: 'orders-dead-letters-test' });
}, 120_000);

afterAll(async () => {
  await orders?.stop();
  await database?.close();
});

it('lists a parked user.deleted and replays it into the real handler, which cancels the open order; a second replay is refused', async () => {
  const leaving = await tokenFor(JWT_SECRET);
  const product = orders.catalog.add({ price: 9_000, name: 'Kettle' });
  orders.inventory.stock.set(product.sku, 5);
  const placed = await call('POST', '/orders', { token: leaving.token, body: { items: [{ productId: product.id, quantity: 2 }] } });
  expect(placed.status).toBe(201);
  // As the consumer parks it after its last failed attempt (inventory was down, say).
  const eventId = newId();
  const event = toCloudEvent('/users-service', { id: eventId, type: 'user.deleted', aggregateType: 'user', aggregateId: leaving.userId, sequence: 3, data: { id: leaving.userId }, occurredAt: new Date() }).toJSON() as Record<string, unknown>;
  await deadLettersOf(database.prisma, orders.built.eventHandlers, createLogger('dead-letters-test', 'silent')).park(event, 'inventory unreachable', 5);

  const listed = await deadLettersCommand('list');
  expect(listed).toMatchObject({ code: 0, stdout: expect.stringContaining(`${eventId}  user.deleted  from /users-service  5 attempts`) });
  expect(listed.stdout).toContain('inventory unreachable');

  const replayed = await deadLettersCommand('replay', eventId);
  expect(replayed).toMatchObject({ code: 0, stdout: `${eventId}: replayed (handled)\n` });
  const order = await call('GET', `/orders/${placed.body.id}`, { token: (await tokenFor(JWT_SECRET, 'admin')).token });
  expect([order.body.status, order.body.userId]).toEqual(['CANCELED', null]);
  expect(orders.inventory.stock.get(product.sku)).toBe(5);

  const again = await deadLettersCommand('replay', eventId);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('404 NOT_FOUND');
  expect((await deadLettersCommand('list')).stdout).toBe('orders-service: no parked dead letters\n');
  // Nobody but a service reaches the door: an admin's token is refused.
  expect((await call('GET', '/internal/dead-letters', { token: (await tokenFor(JWT_SECRET, 'admin')).token })).status).toBe(401);
}, 300_000);
