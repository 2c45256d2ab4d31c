import type { Request } from 'express';
import { ApiError } from '@platform/errors';

/** The highest version a resource reaches: versions are 32-bit integer columns. */
const MAX_VERSION = 2_147_483_647;

/**
 * The version an `If-Match` header expects (ETags are `"<version>"`); undefined when absent or
 * `*`. A value that is no ETag of ours can never match: 412, and so can a version past any a
 * resource reaches (`"99999999999999999999"` was 422 or 400 where a schema read it as a number).
 */
export function expectedVersion(req: Request): number | undefined {
  const header = req.headers['if-match'];
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^(?:W\/)?"(\d+)"$/.exec(header.trim());
  if (!match || Number(match[1]) > MAX_VERSION) throw ApiError.preconditionFailed();
  return Number(match[1]);
}

/**
 * Whether `If-Match` is `*`: the write applies to a resource that exists, whatever its version,
 * and never creates one (RFC 9110 §13.1.1: `*` is false where there is no current representation).
 */
export function ifMatchesAnyExisting(req: Request): boolean {
  return req.headers['if-match']?.trim() === '*';
}

/**
 * Whether `If-None-Match` is `*` on a write: it applies only where there is no current
 * representation (RFC 9110 §13.1.2), a create-only PUT. Ignoring it let a client's create-only PUT
 * of a stock level replace the one another client had made.
 */
export function ifMatchesNoneExisting(req: Request): boolean {
  return req.headers['if-none-match']?.trim() === '*';
}

/**
 * 412 when the client's If-Match names another version than the one the resource is at: for a
 * write that is accepted now and applied later (an order's cancellation request), where there is
 * no versioned write to hand to updateAtVersion.
 */
export function requireExpectedVersion(currentVersion: number, expected: number | undefined): void {
  if (expected !== undefined && expected !== currentVersion) throw ApiError.preconditionFailed();
}

/**
 * A write that would change nothing (`{}`, or the values the resource holds): nothing is written,
 * so the version, the ETag other clients hold for their If-Match, stays, and no `*.updated` event
 * is recorded. If-Match still counts: 412 when it names another version.
 */
export function unchangedAtVersion<T extends { version: number }>(current: T, expected: number | undefined): T {
  requireExpectedVersion(current.version, expected);
  return current;
}

/**
 * Optimistic concurrency for a write at a known version: 412 when the client's If-Match names
 * another version; `write` updates only if the row is still at `currentVersion` and returns null
 * otherwise, which means another write won meanwhile: 412 with If-Match, else 409 (read again),
 * unless `explainLostRace` names what the winner did (a resource whose state tells more than
 * "it changed", such as an order canceled meanwhile).
 */
export async function updateAtVersion<T>(
  what: string,
  currentVersion: number,
  expected: number | undefined,
  write: (version: number) => Promise<T | null>,
  options: { explainLostRace?: () => Promise<Error | undefined> } = {},
): Promise<T> {
  requireExpectedVersion(currentVersion, expected);
  const updated = await write(currentVersion);
  if (updated !== null) return updated;
  if (expected !== undefined) throw ApiError.preconditionFailed();
  throw (await options.explainLostRace?.()) ?? new ApiError('CONFLICT', `The ${what} changed while this request was processed; read it again and retry.`);
}
