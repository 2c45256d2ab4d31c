// Standard Webhooks signatures (the `standardwebhooks` package): `v1,<base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>">`, one per secret in force, space-separated, so a receiver keeps
// verifying while it moves to a rotated secret.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** A new signing secret: `whsec_` and 32 random bytes in base64 (the Standard Webhooks form). */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The three headers of a delivery signed by every secret given. */
export function signedHeaders(messageId: string, at: Date, body: string, secrets: readonly string[]): Record<string, string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(messageId, at, body)).join(' '),
  };
}
