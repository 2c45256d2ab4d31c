import type { ErrorRequestHandler } from 'express';
import { PrismaClientInitializationError, PrismaClientKnownRequestError } from '@prisma/client/runtime/client';
import { ApiError } from '@platform/errors';

/**
 * True when a write broke a unique index. Model queries report it as P2002; raw SQL reports the
 * driver's error (SQLSTATE 23505) wrapped in another code, so both are recognised.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof PrismaClientKnownRequestError)) return false;
  return error.code === 'P2002' || /23505|UniqueConstraintViolation/.test(JSON.stringify(error.meta ?? {}) + error.message);
}

/**
 * True when PostgreSQL broke a deadlock by aborting this statement (SQLSTATE 40P01): nothing it
 * did was kept, so running it again is safe.
 */
export function isDeadlock(error: unknown): boolean {
  if (!(error instanceof PrismaClientKnownRequestError)) return false;
  return /40P01|deadlock detected/i.test(JSON.stringify(error.meta ?? {}) + error.message);
}

/**
 * Awaits a write and turns a unique-index violation into the client's error (an email or SKU
 * already taken): the index decides, so two concurrent writers cannot both win. Other errors
 * pass through unchanged.
 */
export async function whenUniqueViolated<T>(write: Promise<T>, clientError: () => Error): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (isUniqueViolation(error)) throw clientError();
    throw error;
  }
}

/** Prisma's codes for "the database cannot be reached or answered in time", not a bad query. */
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** Driver adapter error kinds and SQLSTATE classes with the same meaning (08: connection exception, 57P: shutdown, 53300: too many connections). */
const UNREACHABLE_KINDS = /"kind":"(DatabaseNotReachable|ConnectionClosed|SocketTimeout|TooManyConnections|DatabaseUnavailable)"|"originalCode":"(08\w{3}|57P\d\d|53300)"/;
const UNREACHABLE_SOCKET = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|Connection terminated|connection timeout|Connection ended/i;

/** True when `error` says the database is down or unreachable right now (worth a retry later). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof PrismaClientInitializationError) return true;
  if (error instanceof PrismaClientKnownRequestError) return UNREACHABLE_CODES.has(error.code) || UNREACHABLE_KINDS.test(JSON.stringify(error.meta ?? {}));
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && ((typeof code === 'string' && UNREACHABLE_SOCKET.test(code)) || UNREACHABLE_SOCKET.test(error.message));
}

/**
 * Error middleware placed before the error renderer: a database that cannot be reached is a
 * temporary outage (503 SERVICE_UNAVAILABLE with Retry-After), not a fault of this request.
 */
export const databaseOutages: ErrorRequestHandler = (error, _req, _res, next) => {
  next(isDatabaseUnavailable(error) ? new ApiError('SERVICE_UNAVAILABLE', 'The service cannot reach its database right now; retry shortly.', { headers: { 'Retry-After': '2' }, cause: error }) : error);
};
