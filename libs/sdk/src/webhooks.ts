// Receiving webhooks: the body of each event type we POST (typed from the document's `webhooks`
// section), and its verification by the Standard Webhooks scheme (v1: HMAC-SHA256 of
// `<webhook-id>.<webhook-timestamp>.<body>` with the base64 key after `whsec_`). Written on Web
// Crypto rather than with the `standardwebhooks` package, which needs Node's Buffer: the SDK runs
// wherever `fetch` does and keeps openapi-fetch its one dependency. Its test checks it against
// that package's signatures.
import type { webhooks } from './openapi-types';

/** Every event type a webhook can carry (`order.created`...). */
export type WebhookEventType = keyof webhooks;

type BodyOf<T extends WebhookEventType> = webhooks[T] extends { post: { requestBody: { content: { 'application/json': infer Body } } } } ? Body : never;

/** A webhook's body; narrow on `type` to get that event's `data`. */
export type WebhookEvent<T extends WebhookEventType = WebhookEventType> = { [K in T]: BodyOf<K> }[T];

/** A delivery that is not ours, was changed, or is too old or too new: answer 400 and do not act on it. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

/** How far `webhook-timestamp` may be from the receiver's clock (the specification's 5 minutes): older deliveries are replays. */
const TOLERANCE_S = 5 * 60;

type HeaderSource = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(entry) ? entry[0] : (entry as string | undefined);
}

const base64Bytes = (text: string): Uint8Array<ArrayBuffer> => Uint8Array.from(atob(text), (char) => char.charCodeAt(0));

/**
 * Checks a delivery's `webhook-signature` against its exact body (the raw text, before any JSON
 * parsing), `webhook-id` and `webhook-timestamp`, and answers the parsed event. `secret` is the
 * endpoint's `whsec_…` secret, or several while you move to a rotated one. Rejects with
 * WebhookVerificationError when no signature matches or the timestamp is out of tolerance.
 */
export async function verifyWebhook(body: string | Uint8Array, headers: HeaderSource, secret: string | readonly string[], now: Date = new Date()): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature');
  if (!/^\d+$/.test(timestamp) || Math.abs(now.getTime() / 1000 - Number(timestamp)) > TOLERANCE_S) throw new WebhookVerificationError('webhook-timestamp is missing or more than 5 minutes from now');
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${text}`);
  const offered: Uint8Array<ArrayBuffer>[] = [];
  for (const part of signatures.split(' ')) {
    const [version, value] = part.split(',');
    if (version !== 'v1' || !value) continue;
    try {
      offered.push(base64Bytes(value));
    } catch {
      // not base64: matches nothing
    }
  }
  for (const candidate of typeof secret === 'string' ? [secret] : secret) {
    const key = await crypto.subtle.importKey('raw', base64Bytes(candidate.replace(/^whsec_/, '')), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    for (const signature of offered) {
      // crypto.subtle.verify compares in constant time.
      if (await crypto.subtle.verify('HMAC', key, signature, signed)) return JSON.parse(text) as WebhookEvent;
    }
  }
  throw new WebhookVerificationError('No signature matches the secret');
}
