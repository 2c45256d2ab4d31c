import { PrismaClientKnownRequestError } from '@prisma/client/runtime/client';
import { isUniqueViolation, whenUniqueViolated } from './errors';

const prismaError = (code: string, meta?: Record<string, unknown>, message = 'failed') => new PrismaClientKnownRequestError(message, { code, clientVersion: 'test', meta });

describe('isUniqueViolation', () => {
  it('recognises P2002 from model queries and a wrapped 23505 from raw SQL', () => {
    expect(isUniqueViolation(prismaError('P2002'))).toBe(true);
    expect(isUniqueViolation(prismaError('P2010', { driverAdapterError: { cause: { kind: 'UniqueConstraintViolation' } } }))).toBe(true);
    expect(isUniqueViolation(prismaError('P2010', undefined, 'duplicate key value (23505)'))).toBe(true);
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
