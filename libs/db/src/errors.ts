import { PrismaClientKnownRequestError } from '@prisma/client/runtime/client';

/**
 * True when a write broke a unique index. Model queries report it as P2002; raw SQL reports the
 * driver's error (SQLSTATE 23505) wrapped in another code, so both are recognised.
 */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof PrismaClientKnownRequestError)) return false;
  return error.code === 'P2002' || /23505|UniqueConstraintViolation/.test(JSON.stringify(error.meta ?? {}) + error.message);
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
