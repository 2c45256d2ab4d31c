// JWT access tokens (jose). HS256 only: the allow-list refuses `alg: none` and any switch to
// another algorithm. Verified tokens are cached until they expire, so the gateway pays for a
// signature check once per token, not once per request.
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { ApiError } from '@platform/errors';

export const roles = ['customer', 'admin'] as const;
export type Role = (typeof roles)[number];

/**
 * Who a token is for. `api`: people's access tokens, what the gateway and services accept.
 * `internal`: service tokens one service presents to another (orders → inventory); their
 * audience differs, so one can never pass as the other.
 */
export type Audience = 'api' | 'internal';
const AUDIENCES: Record<Audience, string> = { api: 'order-platform-api', internal: 'order-platform-internal' };
const SERVICE_ROLE = 'service';

export interface Principal {
  /** A person's id; for a service token, the calling service's name. */
  userId: string;
  /** `service` only on tokens verified for the internal audience. */
  role: Role | typeof SERVICE_ROLE;
  /** Epoch seconds. */
  expiresAt: number;
  /** The user's credential version when the token was issued (claim `cv`; 1 for tokens without one). */
  credentialVersion?: number;
}

export interface AccessToken {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

const ALGORITHM = 'HS256';
const ISSUER = 'order-platform';

function keyOf(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

export async function issueAccessToken(secret: string, subject: { userId: string; role: Role; credentialVersion?: number }, ttlSeconds = 3600): Promise<AccessToken> {
  const accessToken = await new SignJWT({ role: subject.role, cv: subject.credentialVersion ?? 1 })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .setSubject(subject.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCES.api)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(keyOf(secret));
  return { accessToken, tokenType: 'Bearer', expiresIn: ttlSeconds };
}

/**
 * A source of service tokens for calls to another service: `service` is the caller's name (the
 * callee allow-lists it). Tokens live `ttlSeconds` and are renewed when half of that is gone.
 */
export function serviceTokenSource(secret: string, service: string, ttlSeconds = 300): () => Promise<string> {
  let current: { token: Promise<string>; renewAt: number } | undefined;
  return () => {
    if (!current || Date.now() >= current.renewAt) {
      const token = new SignJWT({ role: SERVICE_ROLE })
        .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
        .setSubject(service)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCES.internal)
        .setIssuedAt()
        .setExpirationTime(`${ttlSeconds}s`)
        .sign(keyOf(secret));
      current = { token, renewAt: Date.now() + (ttlSeconds * 1000) / 2 };
    }
    return current.token;
  };
}

export class TokenVerifier {
  private readonly keys: Uint8Array[];
  private readonly cache = new Map<string, Principal>();

  /**
   * `secrets[0]` is the current key; any others are previous keys still accepted while a
   * rotation is under way (tokens they signed live at most one token lifetime).
   */
  private readonly audience: Audience;
  private readonly maxCached: number;

  constructor(secrets: string | string[], options: { audience?: Audience; maxCached?: number } = {}) {
    this.keys = (Array.isArray(secrets) ? secrets : [secrets]).map(keyOf);
    this.audience = options.audience ?? 'api';
    this.maxCached = options.maxCached ?? 10_000;
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
    const roleFits = this.audience === 'api' ? roles.includes(role as Role) : role === SERVICE_ROLE;
    if (typeof payload.sub !== 'string' || payload.sub === '' || !roleFits) throw ApiError.unauthenticated('The access token is not valid.');
    const principal: Principal = { userId: payload.sub, role: role as Principal['role'], expiresAt: payload.exp as number, credentialVersion: Number.isInteger(payload.cv) ? (payload.cv as number) : 1 };
    if (this.cache.size >= this.maxCached) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(token, principal);
    return principal;
  }

  private async verifiedPayload(token: string) {
    for (const [index, key] of this.keys.entries()) {
      try {
        return (await jwtVerify(token, key, { algorithms: [ALGORITHM], issuer: ISSUER, audience: AUDIENCES[this.audience], requiredClaims: ['sub', 'exp'] })).payload;
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
