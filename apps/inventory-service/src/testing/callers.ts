// What inventory's tests call it with: the service tokens of an allowed caller, sent on every call
// of a raw generated client as createInventoryClient sends them, and a way to catch a refusal.
import { InterceptingCall, type Interceptor, type ServiceError } from '@grpc/grpc-js';
import { serviceTokenSource, TokenVerifier } from '@platform/auth';

export const SECRET = 'inventory-test-secret-inventory-test-secret';
export const callers = { verifier: new TokenVerifier(SECRET, { audience: 'internal' }), allowed: ['orders-service'] };
export const ordersToken = serviceTokenSource(SECRET, 'orders-service');

/** Sends `token` (a bearer token) on every call of a raw client. */
export const bearing =
  (token: string): Interceptor =>
  (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start: (metadata, listener, next) => {
        metadata.set('authorization', `Bearer ${token}`);
        next(metadata, listener);
      },
    });

/** The error a call that must fail failed with. */
export async function failure(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as ServiceError;
  }
  throw new Error('expected the call to fail');
}
