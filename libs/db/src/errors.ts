import type { ErrorRequestHandler } from 'express';
import { PrismaClientInitializationError, PrismaClientKnownRequestError } from '@prisma/client/runtime/client';
import { ApiError } from '@platform/errors';

// Every database error is recognised by structured facts, never by its message: Prisma's code
// (P2002, P1001, ...) and, under it, what the driver adapter reported in
// `meta.driverAdapterError.cause`: its `kind` and the SQLSTATE PostgreSQL sent (`originalCode`).
// Both adapters fill these the same way (@prisma/adapter-pg and pglite-prisma-adapter,
// `convertDriverError`); they differ in the kinds they name (pg maps 40P01 to
// TransactionWriteConflict, PGlite leaves it `postgres`), so SQLSTATEs are read, not kinds,
// wherever PostgreSQL sent one. Model queries carry the mapped code; raw SQL carries P2010 with
// the same cause.

/** What the driver adapter said under a Prisma error, when it said anything. */
interface AdapterCause {
  kind?: string;
  /** The SQLSTATE, for an error PostgreSQL sent (absent for a socket that failed). */
  originalCode?: string;
}

function adapterCause(error: PrismaClientKnownRequestError): AdapterCause {
  const cause = (error.meta as { driverAdapterError?: { cause?: unknown } } | undefined)?.driverAdapterError?.cause;
  return typeof cause === 'object' && cause !== null ? (cause as AdapterCause) : {};
}

const UNIQUE_VIOLATION = '23505';
const DEADLOCK_DETECTED = '40P01';

/** True when a write broke a unique index: P2002 from model queries, SQLSTATE 23505 under raw SQL's P2010. */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof PrismaClientKnownRequestError)) return false;
  return error.code === 'P2002' || adapterCause(error).originalCode === UNIQUE_VIOLATION;
}

/**
 * True when PostgreSQL broke a deadlock by aborting this statement (SQLSTATE 40P01): nothing it
 * did was kept, so running it again is safe.
 */
export function isDeadlock(error: unknown): boolean {
  return error instanceof PrismaClientKnownRequestError && adapterCause(error).originalCode === DEADLOCK_DETECTED;
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

/** Prisma's codes for "the database cannot be reached or answered in time", as Prisma 7 maps the adapters' kinds (DatabaseNotReachable, SocketTimeout, ConnectionClosed, TooManyConnections), and the pool's timeout (P2024). */
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024', 'P2037']);
/** The same kinds under raw SQL, whose errors all carry P2010. */
const UNREACHABLE_KINDS = new Set(['DatabaseNotReachable', 'DatabaseUnavailable', 'SocketTimeout', 'ConnectionClosed', 'TooManyConnections']);
/** SQLSTATEs with that meaning: class 08 (connection exception), 57P01-57P03 (the server is shutting down or starting), 53300 (too many connections). */
const unreachableState = (state: string) => state.startsWith('08') || state === '57P01' || state === '57P02' || state === '57P03' || state === '53300';
/** Node's codes for a socket that could not connect or was cut (an error that reached the handler without Prisma). */
const UNREACHABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EPIPE']);
/**
 * The errors recognised by their text, because their library gives nothing else: node-postgres
 * (pg 8, lib/client.js) rejects with a bare `new Error(...)`, no code, a query
 * - of a connection that ended without an error message from the server (a network cut, a crashed
 *   server, an idle connection the server closed during a shutdown): the `con.once('end')` handler;
 * - sent on a client that already met a connection error, or was closed, while a transaction
 *   still held it (`query()`'s `_queryable` and `_ending` checks): what a write in flight meets
 *   when PostgreSQL restarts under it (the PostgreSQL-restart fault test caught the first).
 * @prisma/adapter-pg's `convertDriverError` passes them through unwrapped because they have no
 * code. Compared whole, never searched for.
 */
const PG_CONNECTION_LOST = new Set(['Connection terminated unexpectedly', 'Client has encountered a connection error and is not queryable', 'Client was closed and is not queryable']);

/** True when `error` says the database is down or unreachable right now (worth a retry later). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (error instanceof PrismaClientInitializationError) return true;
  if (error instanceof PrismaClientKnownRequestError) {
    const { kind, originalCode } = adapterCause(error);
    return UNREACHABLE_CODES.has(error.code) || (kind !== undefined && UNREACHABLE_KINDS.has(kind)) || (originalCode !== undefined && unreachableState(originalCode));
  }
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return UNREACHABLE_SOCKET_CODES.has(code);
  return error.constructor === Error && PG_CONNECTION_LOST.has(error.message);
}

/**
 * Error middleware placed before the error renderer: a database that cannot be reached is a
 * temporary outage (503 SERVICE_UNAVAILABLE with Retry-After), not a fault of this request.
 */
export const databaseOutages: ErrorRequestHandler = (error, _req, _res, next) => {
  next(isDatabaseUnavailable(error) ? new ApiError('SERVICE_UNAVAILABLE', 'The service cannot reach its database right now; retry shortly.', { headers: { 'Retry-After': '2' }, cause: error }) : error);
};
