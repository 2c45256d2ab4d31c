// JWT access tokens (jose). HS256 only: the allow-list refuses `alg: none` and any switch to
// another algorithm. Verified tokens are cached until they expire, so the gateway pays for a
// signature check once per token, not once per request.
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { ApiError } from '@platform/errors';

export const roles = ['customer', 'admin'] as const;
export type Role = (typeof roles)[number];

export interface Principal {
  userId: string;
  role: Role;
  /** Epoch seconds. */
  expiresAt: number;
}

export interface AccessToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

const ALGORITHM = 'HS256';
const ISSUER = 'order-platform';
const AUDIENCE = 'order-platform-api';

function keyOf(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

export async function issueAccessToken(secret: string, subject: { userId: string; role: Role }, ttlSeconds = 3600): Promise<AccessToken> {
  const accessToken = await new SignJWT({ role: subject.role })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(subject.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(keyOf(secret));
  return { accessToken, tokenType: 'Bearer', expiresIn: ttlSeconds };
}

export class TokenVerifier {
  private readonly keys: Uint8Array[];
  private readonly cache = new Map<string, Principal>();

  /**
   * `secrets[0]` is the current key; any others are previous keys still accepted while a
   * rotation is under way (tokens they signed live at most one token lifetime).
   */
  constructor(
    secrets: string | string[],
    private readonly maxCached = 10_000,
  ) {
    this.keys = (Array.isArray(secrets) ? secrets : [secrets]).map(keyOf);
  }

  /** The principal of a valid token; throws 401 UNAUTHENTICATED otherwise. */
  async verify(token: string): Promise<Principal> {
    const cached = this.cache.get(token);
    if (cached) {
      if (cached.expiresAt * 1000 > Date.now()) return cached;
      this.cache.delete(token);
    }
    const payload = await this.verifiedPayload(token);
    const role = payload.role;
    if (typeof payload.sub !== 'string' || !roles.includes(role as Role)) throw ApiError.unauthenticated('The access token is not valid.');
    const principal: Principal = { userId: payload.sub, role: role as Role, expiresAt: payload.exp as number };
    if (this.cache.size >= this.maxCached) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(token, principal);
    return principal;
  }

  private async verifiedPayload(token: string) {
    for (const [index, key] of this.keys.entries()) {
      try {
        return (await jwtVerify(token, key, { algorithms: [ALGORITHM], issuer: ISSUER, audience: AUDIENCE, requiredClaims: ['sub', 'exp'] })).payload;
      } catch (error) {
        // Only a signature mismatch is worth trying the previous key for.
        if (error instanceof joseErrors.JWSSignatureVerificationFailed && index < this.keys.length - 1) continue;
        throw ApiError.unauthenticated(error instanceof joseErrors.JWTExpired ? 'The access token has expired.' : 'The access token is not valid.');
      }
    }
    throw ApiError.unauthenticated('The access token is not valid.');
  }

  /** Reads `Authorization: Bearer <token>`; missing or malformed is 401. */
  async verifyHeader(header: string | undefined): Promise<Principal> {
    if (!header) throw ApiError.unauthenticated('Send an access token: Authorization: Bearer <token>.');
    const match = /^Bearer ([\w-]+\.[\w-]+\.[\w-]*)$/i.exec(header.trim());
    if (!match) throw ApiError.unauthenticated('The Authorization header must be "Bearer <token>".');
    return this.verify(match[1]);
  }
}
