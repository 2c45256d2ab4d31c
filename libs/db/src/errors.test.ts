import { PrismaClientKnownRequestError } from '@prisma/client/runtime/client';
import { isDatabaseUnavailable, isDeadlock, isUniqueViolation, whenUniqueViolated } from './errors';

const prismaError = (code: string, meta?: Record<string, unknown>, message = 'failed') => new PrismaClientKnownRequestError(message, { code, clientVersion: 'test', meta });
/** A Prisma error as the driver adapters report one: P2010 for raw SQL, the adapter's kind and PostgreSQL's SQLSTATE under it. */
const adapterError = (cause: { kind: string; originalCode?: string }, code = 'P2010') => prismaError(code, { driverAdapterError: { name: 'DriverAdapterError', cause } });

describe('isUniqueViolation', () => {
  it('recognises P2002 from model queries and SQLSTATE 23505 under raw SQL\'s P2010', () => {
    expect(isUniqueViolation(prismaError('P2002'))).toBe(true);
    expect(isUniqueViolation(adapterError({ kind: 'UniqueConstraintViolation', originalCode: '23505' }))).toBe(true);
  });

  it('never by the words of a message', () => {
    expect(isUniqueViolation(prismaError('P2010', undefined, 'duplicate key value (23505) UniqueConstraintViolation'))).toBe(false);
  });

  it('refuses everything else', () => {
    expect(isUniqueViolation(prismaError('P2025'))).toBe(false);
    expect(isUniqueViolation(new Error('P2002'))).toBe(false);
    expect(isUniqueViolation(undefined)).toBe(false);
  });
});

describe('whenUniqueViolated', () => {
  const taken = () => new Error('email taken');

  it('answers the write when it succeeds', async () => {
    await expect(whenUniqueViolated(Promise.resolve('row'), taken)).resolves.toBe('row');
  });

  it('turns a unique violation into the client error', async () => {
    await expect(whenUniqueViolated(Promise.reject(prismaError('P2002')), taken)).rejects.toThrow('email taken');
  });

  it('passes every other error through', async () => {
    const other = prismaError('P2025');
    await expect(whenUniqueViolated(Promise.reject(other), taken)).rejects.toBe(other);
  });
});

describe('isDeadlock', () => {
  it('recognises SQLSTATE 40P01 as either adapter reports it', () => {
    expect(isDeadlock(adapterError({ kind: 'TransactionWriteConflict', originalCode: '40P01' }, 'P2034'))).toBe(true); // adapter-pg
    expect(isDeadlock(adapterError({ kind: 'postgres', originalCode: '40P01' }))).toBe(true); // PGlite
  });

  it('refuses a serialization failure, and words', () => {
    expect(isDeadlock(adapterError({ kind: 'TransactionWriteConflict', originalCode: '40001' }, 'P2034'))).toBe(false);
    expect(isDeadlock(prismaError('P2010', undefined, 'deadlock detected (40P01)'))).toBe(false);
  });
});

describe('isDatabaseUnavailable', () => {
  it('recognises the codes, adapter kinds and SQLSTATEs of a database that is down', () => {
    expect(isDatabaseUnavailable(prismaError('P1001'))).toBe(true);
    expect(isDatabaseUnavailable(adapterError({ kind: 'DatabaseNotReachable' }))).toBe(true);
    expect(isDatabaseUnavailable(adapterError({ kind: 'postgres', originalCode: '57P01' }))).toBe(true);
    expect(isDatabaseUnavailable(adapterError({ kind: 'postgres', originalCode: '08006' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('connect failed'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true); // node-postgres gives nothing else
    // A transaction's next query on a client that met a connection error (PostgreSQL restarting under a sign-up).
    expect(isDatabaseUnavailable(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Client was closed and is not queryable'))).toBe(true);
  });

  it('refuses other errors whatever their message says', () => {
    expect(isDatabaseUnavailable(adapterError({ kind: 'UniqueConstraintViolation', originalCode: '23505' }, 'P2002'))).toBe(false);
    expect(isDatabaseUnavailable(prismaError('P2010', { note: 'ECONNREFUSED' }, 'Connection ended'))).toBe(false);
    expect(isDatabaseUnavailable(new Error('connect ECONNREFUSED 127.0.0.1:5432'))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError('Connection terminated unexpectedly'))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('ECONNREFUSED'), { code: 'ERR_INVALID_ARG_TYPE' }))).toBe(false);
  });
});
