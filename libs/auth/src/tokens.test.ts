import { SignJWT, UnsecuredJWT } from 'jose';
import { ApiError } from '@platform/errors';
import { issueAccessToken, serviceTokenSource, TokenVerifier } from './tokens';
import { assertOwnerOrAdmin, requireAdmin } from './access';

const secret = 'a-test-secret-that-is-long-enough-0123456789';
const verifier = new TokenVerifier(secret);

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    return error as ApiError;
  }
  throw new Error('expected a rejection');
}

describe('access tokens', () => {
  it('issues a bearer token that verifies to its user and role', async () => {
    const token = await issueAccessToken(secret, { userId: 'u1', role: 'admin' }, 60);
    expect(token).toMatchObject({ tokenType: 'Bearer', expiresIn: 60 });
    await expect(verifier.verifyHeader(`Bearer ${token.accessToken}`)).resolves.toMatchObject({ userId: 'u1', role: 'admin' });
  });

  it('refuses alg none, a wrong signature, a tampered payload and an expired token with 401 and WWW-Authenticate', async () => {
    const valid = (await issueAccessToken(secret, { userId: 'u1', role: 'customer' })).accessToken;
    const [header, , signature] = valid.split('.');
    const tamperedPayload = Buffer.from(JSON.stringify({ sub: 'u1', role: 'admin', iss: 'order-platform', aud: 'order-platform-api', exp: 9999999999 })).toString('base64url');
    const unsigned = new UnsecuredJWT({ role: 'admin' }).setSubject('u1').setIssuer('order-platform').setAudience('order-platform-api').setExpirationTime('1h').encode();
    const otherKey = await new SignJWT({ role: 'admin' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('u1')
      .setIssuer('order-platform')
      .setAudience('order-platform-api')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-another-secret-another'));
    const expired = await new SignJWT({ role: 'customer' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('u1')
      .setIssuer('order-platform')
      .setAudience('order-platform-api')
      .setExpirationTime(Math.floor(Date.now() / 1000) - 10)
      .sign(new TextEncoder().encode(secret));
    const hs512 = await new SignJWT({ role: 'admin' }).setProtectedHeader({ alg: 'HS512' }).setSubject('u1').setExpirationTime('1h').sign(new TextEncoder().encode(secret));
    for (const token of [unsigned, `${header}.${tamperedPayload}.${signature}`, otherKey, expired, hs512]) {
      const error = await rejection(verifier.verify(token));
      expect(error).toBeInstanceOf(ApiError);
      expect(error.status).toBe(401);
      expect(error.code).toBe('UNAUTHENTICATED');
      expect(error.headers['WWW-Authenticate']).toBe('Bearer');
    }
    expect((await rejection(verifier.verify(expired))).message).toMatch(/expired/);
  });

  it('refuses a signed token whose subject is empty: it names nobody (the gateway asked users-service about no one, and answered 503)', async () => {
    const nobody = await new SignJWT({ role: 'customer' }).setProtectedHeader({ alg: 'HS256' }).setSubject('').setIssuer('order-platform').setAudience('order-platform-api').setExpirationTime('1h').sign(new TextEncoder().encode(secret));
    const error = await rejection(verifier.verify(nobody));
    expect([error instanceof ApiError, error.status, error.code]).toEqual([true, 401, 'UNAUTHENTICATED']);
  });

  it('refuses a missing or malformed Authorization header', async () => {
    expect((await rejection(verifier.verifyHeader(undefined))).status).toBe(401);
    expect((await rejection(verifier.verifyHeader('Basic dXNlcjpwYXNz'))).status).toBe(401);
    expect((await rejection(verifier.verifyHeader('Bearer not-a-jwt'))).status).toBe(401);
  });
});

describe('access rules', () => {
  const customer = { userId: 'u1', role: 'customer' as const, expiresAt: 0 };
  const admin = { userId: 'a1', role: 'admin' as const, expiresAt: 0 };

  it('hides another customer\'s resource behind 404 and lets the owner and admins through', () => {
    expect(() => assertOwnerOrAdmin(customer, 'u1', 'Order')).not.toThrow();
    expect(() => assertOwnerOrAdmin(admin, 'u1', 'Order')).not.toThrow();
    try {
      assertOwnerOrAdmin(customer, 'u2', 'Order');
      throw new Error('expected 404');
    } catch (error) {
      expect((error as ApiError).status).toBe(404);
    }
  });

  it('answers 403 to a customer on an admin-only operation', () => {
    expect(() => requireAdmin(admin)).not.toThrow();
    expect(() => requireAdmin(customer)).toThrow(expect.objectContaining({ status: 403, code: 'FORBIDDEN' }));
  });
});

describe('key rotation', () => {
  const previous = 'the-previous-secret-the-previous-secret-0';
  const current = 'the-current-secret-the-current-secret-012';

  it('accepts tokens signed with the previous secret while it is configured, and only then', async () => {
    const old = (await issueAccessToken(previous, { userId: 'u-old', role: 'customer' })).accessToken;
    const fresh = (await issueAccessToken(current, { userId: 'u-new', role: 'customer' })).accessToken;
    const rotating = new TokenVerifier([current, previous]);
    await expect(rotating.verify(old)).resolves.toMatchObject({ userId: 'u-old' });
    await expect(rotating.verify(fresh)).resolves.toMatchObject({ userId: 'u-new' });
    const rotated = new TokenVerifier(current);
    await expect(rotated.verify(old)).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });
});

describe('service tokens', () => {
  const services = new TokenVerifier(secret, { audience: 'internal' });

  it('pass only the internal verifier, and people’s tokens pass only the API verifier', async () => {
    const serviceToken = await serviceTokenSource(secret, 'orders-service')();
    expect(await services.verify(serviceToken)).toMatchObject({ userId: 'orders-service', role: 'service' });
    await expect(verifier.verify(serviceToken)).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    const { accessToken } = await issueAccessToken(secret, { userId: 'u1', role: 'admin' });
    await expect(services.verify(accessToken)).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('are reused until half their lifetime is gone', async () => {
    const source = serviceTokenSource(secret, 'orders-service', 300);
    expect(await source()).toBe(await source());
  });
});
