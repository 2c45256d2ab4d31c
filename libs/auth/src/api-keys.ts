// The issued API key's text, shared by users-service (which makes keys) and the gateway (which
// reads them): `opk_<id>_<secret><checksum>`, as GitHub's and Stripe's keys are built.
// - `opk_`: a fixed prefix, so secret scanners (GitHub push protection, trufflehog, gitleaks)
//   can match a leaked key with one pattern, and a reader sees what it is.
// - `<id>`: the key's UUID as 32 lower-case hex digits: the row to look up, never secret.
// - `<secret>`: 32 base62 characters from the CSPRNG (about 190 bits).
// - `<checksum>`: CRC-32 of everything before it, 6 base62 characters. A mistyped or truncated
//   key (or a random string shaped like one) is refused by the gateway without asking
//   users-service or touching a database, and scanners can tell a real key from a look-alike.
// The checksum is no protection against forgery (anyone can compute a CRC): only the secret,
// checked against its keyed hash in users-service, authenticates.
import { randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const API_KEY_PREFIX = 'opk_';

/** What a key may be allowed to do: `<resource>:read` (GET, HEAD, GraphQL queries) or `<resource>:write` (everything else). */
export const apiKeyScopes = ['users:read', 'users:write', 'orders:read', 'orders:write', 'products:read', 'products:write', 'inventory:read', 'inventory:write'] as const;
export type ApiKeyScope = (typeof apiKeyScopes)[number];
/** The resources scopes name. */
export type ScopedResource = 'users' | 'orders' | 'products' | 'inventory';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SECRET_LENGTH = 32;
const CHECKSUM_LENGTH = 6; // 62^6 > 2^32: every CRC-32 fits
const KEY_PATTERN = /^opk_([0-9a-f]{32})_([0-9A-Za-z]{38})$/;

function base62Checksum(text: string): string {
  let value = crc32(text);
  let digits = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    digits = BASE62[value % 62] + digits;
    value = Math.floor(value / 62);
  }
  return digits;
}

/** The full key text for a key id (a UUID): shown to its owner once, never stored. */
export function newApiKeyText(id: string): string {
  let secret = '';
  for (let i = 0; i < SECRET_LENGTH; i++) secret += BASE62[randomInt(62)];
  const body = `${API_KEY_PREFIX}${id.replaceAll('-', '')}_${secret}`;
  return body + base62Checksum(body);
}

/** True when the text looks like an issued key at all (the prefix): it is then read as one, never as a JWT. */
export function looksLikeApiKey(text: string): boolean {
  return text.startsWith(API_KEY_PREFIX);
}

/** The key's id (a UUID) when the text is a well-formed key with a correct checksum; undefined otherwise. */
export function apiKeyIdOf(text: string): string | undefined {
  const match = KEY_PATTERN.exec(text);
  if (!match) return undefined;
  const body = text.slice(0, -CHECKSUM_LENGTH);
  if (base62Checksum(body) !== text.slice(-CHECKSUM_LENGTH)) return undefined;
  const hex = match[1];
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The scope a call needs: reads (GET, HEAD, GraphQL queries) need `:read`, everything else `:write`. */
export function scopeFor(resource: ScopedResource, write: boolean): ApiKeyScope {
  return `${resource}:${write ? 'write' : 'read'}`;
}
