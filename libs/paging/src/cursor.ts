// Opaque, tamper-evident keyset cursors: base64url(JSON) + HMAC-SHA256. A cursor only opens for
// the list, sort and filters that made it, so a forged or foreign cursor is a 400, never a
// silent wrong page.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '@platform/errors';

export type CursorValue = string | number | Date | null;

interface CursorPayload {
  s: string; // scope hash: list + sort + filters
  v: (string | number | null | { d: string })[]; // sort value(s) then id
}

const SIGNATURE_BYTES = 16;

export function scopeOf(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 12);
}

function sign(secret: string, data: string): Buffer {
  return createHmac('sha256', secret).update(data).digest().subarray(0, SIGNATURE_BYTES);
}

export function encodeCursor(secret: string, scope: string, values: CursorValue[]): string {
  const payload: CursorPayload = { s: scope, v: values.map((value) => (value instanceof Date ? { d: value.toISOString() } : value)) };
  const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${data}.${sign(secret, data).toString('base64url')}`;
}

export function decodeCursor(secret: string, scope: string, cursor: string): CursorValue[] {
  const [data, signature, extra] = cursor.split('.');
  if (!data || !signature || extra !== undefined) throw invalidCursor();
  const given = Buffer.from(signature, 'base64url');
  const expected = sign(secret, data);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor();
  let payload: CursorPayload;
  try {
    payload = JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as CursorPayload;
  } catch {
    throw invalidCursor();
  }
  if (payload.s !== scope || !Array.isArray(payload.v)) throw invalidCursor();
  return payload.v.map((value) => (value !== null && typeof value === 'object' ? new Date(value.d) : value));
}

function invalidCursor(): ApiError {
  return new ApiError('INVALID_CURSOR', 'The cursor is not valid for this list. Send back nextCursor exactly as received, with the same filters and sort.', {
    fieldErrors: [{ field: 'cursor', code: 'INVALID_FORMAT', message: 'Unknown, altered or foreign cursor.' }],
  });
}
