import type { Request } from 'express';
import { ApiError } from '@platform/errors';

/**
 * The version an `If-Match` header expects (ETags are `"<version>"`); undefined when absent or
 * `*`. A value that is no ETag of ours can never match: 412.
 */
export function expectedVersion(req: Request): number | undefined {
  const header = req.headers['if-match'];
  if (header === undefined || header.trim() === '*') return undefined;
  const match = /^(?:W\/)?"(\d+)"$/.exec(header.trim());
  if (!match) throw ApiError.preconditionFailed();
  return Number(match[1]);
}
