// verifyWebhook against deliveries signed by the Standard Webhooks reference package, as the
// platform signs them: it accepts them with either secret of a rotation and refuses the rest.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError } from './webhooks';

const secret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const rotated = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
const body = JSON.stringify({ id: '0b6f1c3e-8a53-4f0e-9a11-3d1c8e0f5a77', type: 'order.shipped', timestamp: '2026-11-24T10:00:00.000Z', subject: 'order/0b6f1c3e-8a53-4f0e-9a11-3d1c8e0f5a77', data: { id: 'x' } });
const at = new Date('2026-11-24T10:00:00Z');
const signed = (secrets: string[], id = 'msg-1') => ({
  'webhook-id': id,
  'webhook-timestamp': String(at.getTime() / 1000),
  'webhook-signature': secrets.map((key) => new Webhook(key).sign(id, at, body)).join(' '),
});

it('answers the event of a delivery signed with the secret, from a plain object or a Headers', async () => {
  expect(await verifyWebhook(body, signed([secret]), secret, at)).toMatchObject({ type: 'order.shipped', data: { id: 'x' } });
  expect((await verifyWebhook(new TextEncoder().encode(body), new Headers(signed([secret])), [rotated, secret], at)).type).toBe('order.shipped');
  // During a rotation the delivery carries two signatures; a receiver with either secret accepts it.
  expect((await verifyWebhook(body, signed([rotated, secret]), rotated, at)).id).toBe('0b6f1c3e-8a53-4f0e-9a11-3d1c8e0f5a77');
  expect((await verifyWebhook(body, signed([rotated, secret]), secret, at)).id).toBe('0b6f1c3e-8a53-4f0e-9a11-3d1c8e0f5a77');
});

it('refuses another secret, an altered body or id, a missing header and a stale timestamp', async () => {
  await expect(verifyWebhook(body, signed([secret]), rotated, at)).rejects.toThrow(WebhookVerificationError);
  await expect(verifyWebhook(body.replace('"x"', '"y"'), signed([secret]), secret, at)).rejects.toThrow(WebhookVerificationError);
  await expect(verifyWebhook(body, { ...signed([secret]), 'webhook-id': 'msg-2' }, secret, at)).rejects.toThrow(WebhookVerificationError);
  await expect(verifyWebhook(body, { 'webhook-id': 'msg-1', 'webhook-timestamp': '1' }, secret, at)).rejects.toThrow(/Missing/);
  await expect(verifyWebhook(body, signed([secret]), secret, new Date(at.getTime() + 6 * 60_000))).rejects.toThrow(/5 minutes/);
});

it('the README shows a secret in the shape the platform issues (whsec_ and 32 bytes in base64), one that verifies', async () => {
  const readme = readFileSync(path.join(__dirname, '../README.md'), 'utf8');
  const examples = readme.match(/whsec_[A-Za-z0-9+/=]+/g) ?? [];
  expect(examples.length).toBeGreaterThan(0);
  for (const example of examples) {
    const key = Buffer.from(example.slice('whsec_'.length), 'base64');
    // As users-service's newSigningSecret writes one: the base64 of exactly 32 bytes.
    expect([example, key.length, `whsec_${key.toString('base64')}`]).toEqual([example, 32, example]);
    expect((await verifyWebhook(body, signed([example]), example, at)).type).toBe('order.shipped');
  }
});
