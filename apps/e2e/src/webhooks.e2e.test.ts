// Webhooks through the gateway, as a client meets them: a customer registers a URL of its own (a
// real HTTP server here), places an order and changes its profile, and receives both events,
// signed so that the `standardwebhooks` package verifies them exactly as a receiver would. The
// events list and the delivery log say the same; another user sees none of it.
import http from 'node:http';
import { apiClient } from '@platform/test-kit';
import { Webhook } from 'standardwebhooks';
import { useContract } from './contract';
import { gatewayUrl, STOCKED_PRODUCTS, stackState } from './stack';

const call = apiClient(() => gatewayUrl, useContract(__filename).onResponse);

interface Received {
  headers: Record<string, string>;
  body: string;
}
const received: Received[] = [];
let receiver: http.Server;
let receiverUrl: string;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

async function signUp(name: string): Promise<{ id: string; token: string }> {
  const email = `${name.toLowerCase().replace(/\W+/g, '-')}-${Date.now()}@example.com`;
  const user = await call('POST', '/v1/users', { body: { name, email, password: 'webhook-password-1' } });
  const token = (await call('POST', '/v1/tokens', { body: { email, password: 'webhook-password-1' } })).body.accessToken as string;
  return { id: user.body.id as string, token };
}

/** Waits (bounded) until the receiver has a delivery of `type` about `subject`. */
async function deliveryOf(type: string, subject: string): Promise<Received> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    const found = received.find((request) => {
      const body = JSON.parse(request.body) as { type: string; subject: string };
      return body.type === type && body.subject === subject;
    });
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no ${type} about ${subject} arrived in 30 s`);
}

it('delivers the events of a customer signed by Standard Webhooks, and lists them', async () => {
  const customer = await signUp('Hook Customer');
  const bystander = await signUp('Hook Bystander');
  const endpoint = await call('POST', '/v1/webhook-endpoints', { token: customer.token, body: { url: receiverUrl, eventTypes: ['order.created', 'user.updated'], description: 'e2e receiver' } });
  expect(endpoint.status).toBe(201);
  expect(endpoint.body.secret).toMatch(/^whsec_/);
  expect(endpoint.headers.get('location')).toBe(`/v1/webhook-endpoints/${endpoint.body.id}`);

  const product = (await call('GET', STOCKED_PRODUCTS, { token: customer.token })).body.items[0] as { id: string };
  const order = await call('POST', '/v1/orders', { token: customer.token, body: { items: [{ productId: product.id, quantity: 1 }] } });
  expect(order.status).toBe(201);
  expect((await call('PATCH', `/v1/users/${customer.id}`, { token: customer.token, body: { nickname: 'hooked' } })).status).toBe(200);
  // The bystander's order is not the customer's business.
  const other = await call('POST', '/v1/orders', { token: bystander.token, body: { items: [{ productId: product.id, quantity: 1 }] } });

  const created = await deliveryOf('order.created', `order/${order.body.id}`);
  const verifier = new Webhook(endpoint.body.secret);
  expect(verifier.verify(created.body, created.headers)).toMatchObject({ type: 'order.created', subject: `order/${order.body.id}`, data: { id: order.body.id, userId: customer.id, status: 'PENDING', amount: order.body.amount } });
  const updated = await deliveryOf('user.updated', `user/${customer.id}`);
  expect(verifier.verify(updated.body, updated.headers)).toMatchObject({ type: 'user.updated', data: { id: customer.id } });
  expect(JSON.stringify(received)).not.toMatch(/password|accessToken/i);
  expect(received.some((request) => request.body.includes(other.body.id))).toBe(false);

  const events = await call('GET', `/v1/events?type=order.created&resource=order/${order.body.id}`, { token: customer.token });
  expect(events.status).toBe(200);
  expect(events.body.items).toEqual([JSON.parse(created.body)]);
  expect((await call('GET', `/v1/events?resource=order/${other.body.id}`, { token: customer.token })).body.items).toEqual([]);
  expect((await call('GET', `/v1/events?resource=order/${other.body.id}`, { token: stackState().adminToken })).body.items.length).toBeGreaterThan(0);

  const deliveries = await call('GET', `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`, { token: customer.token });
  const orderDelivery = deliveries.body.items.find((delivery: { eventId: string }) => delivery.eventId === created.headers['webhook-id']);
  expect(orderDelivery).toMatchObject({ status: 'SUCCEEDED', attemptCount: 1, attempts: [{ outcome: 'SUCCEEDED', statusCode: 200, responseBody: 'thanks', latencyMs: expect.any(Number) }] });

  // Sent again on request, now signed by both secrets after a rotation: either verifies it.
  const rotated = await call('POST', `/v1/webhook-endpoints/${endpoint.body.id}/secret/rotation`, { token: customer.token });
  expect(rotated.status).toBe(200);
  const before = received.length;
  expect((await call('POST', `/v1/webhook-endpoints/${endpoint.body.id}/deliveries/${orderDelivery.id}/retry`, { token: customer.token })).status).toBe(202);
  for (let waited = 0; received.length === before && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
  const resent = received[before];
  expect(resent.headers['webhook-id']).toBe(created.headers['webhook-id']);
  expect(resent.headers['webhook-signature'].split(' ')).toHaveLength(2);
  expect(new Webhook(rotated.body.secret).verify(resent.body, resent.headers)).toMatchObject({ type: 'order.created' });
  expect(verifier.verify(resent.body, resent.headers)).toMatchObject({ type: 'order.created' });

  const read = await call('GET', `/v1/webhook-endpoints/${endpoint.body.id}`, { token: customer.token });
  const patched = await call('PATCH', `/v1/webhook-endpoints/${endpoint.body.id}`, { token: customer.token, headers: { 'if-match': read.headers.get('etag')! }, body: { ordered: true } });
  expect([patched.status, patched.body.ordered]).toEqual([200, true]);

  // Someone else's endpoint does not exist for them.
  expect((await call('GET', `/v1/webhook-endpoints/${endpoint.body.id}`, { token: bystander.token })).status).toBe(404);
  expect((await call('GET', `/v1/webhook-endpoints/${endpoint.body.id}/deliveries`, { token: bystander.token })).status).toBe(404);
  expect((await call('DELETE', `/v1/webhook-endpoints/${endpoint.body.id}`, { token: bystander.token })).status).toBe(404);
  expect((await call('DELETE', `/v1/webhook-endpoints/${endpoint.body.id}`, { token: customer.token })).status).toBe(204);
});

it('refuses a URL aimed inside (cloud metadata, private ranges) with 422 and the reason', async () => {
  const customer = await signUp('Hook Attacker');
  for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://10.0.0.1/', 'http://[fd00:ec2::254]/']) {
    const refused = await call('POST', '/v1/webhook-endpoints', { token: customer.token, body: { url, eventTypes: ['order.created'] } });
    expect([refused.status, refused.body.code, refused.body.errors[0].field]).toEqual([422, 'VALIDATION_FAILED', 'url']);
  }
  const unknown = await call('POST', '/v1/webhook-endpoints', { token: customer.token, body: { url: receiverUrl, eventTypes: ['order.exploded'] } });
  expect(unknown.status).toBe(422);
});
