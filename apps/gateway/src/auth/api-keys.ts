// Issued API keys at the gateway: reading a key from the request, checking it with users-service,
// and what it may do (its scopes).
//
// - Read from `X-Api-Key: opk_…` or `Authorization: Bearer opk_…` (the prefix tells a key from a
//   JWT). A malformed key or a wrong checksum is refused (401) here, without a lookup.
// - Checked by users-service (POST /internal/api-key-verifications, with a service token), which
//   holds the keyed hashes. Each answer, "valid" or not, is trusted `cacheMs` (API_KEYS_CACHE_MS,
//   5 s); past that a request waits for a new one and, when users-service does not answer within
//   `timeoutMs`, is refused with 503 and the one Retry-After (fail closed), as the credential check
//   does (credentials.ts). The lookup is an outgoing call like any other (libs/outgoing-calls).
// - Revoked: users-service pushes each revocation on the revocation feed (revocation-feed.ts), so
//   every replica refuses the key within about a second; a lost push is covered by the cache bound.
//   An expiry (including the end of a rotation's overlap) is held with the answer and enforced to the
//   millisecond. A deleted owner stops all of the owner's keys through the credential check.
// - Forwarded as the owner: services never see the key. The gateway sends them a short-lived access
//   token for the owner (signed with JWT_SECRET, as users-service's are), so the owner's role and
//   ownership rules apply in the service, and the scopes narrow them here.
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { apiKeyIdOf, issueAccessToken, looksLikeApiKey, type Role, scopeFor, type ScopedResource } from '@platform/auth';
import { ApiError } from '@platform/errors';
import { createOutgoingCalls, type HttpTarget, type OutgoingCalls, RETRY_AFTER_HEADER } from '@platform/outgoing-calls';
import type { Logger } from '@platform/service-kit';

/** A key users-service vouched for. */
export interface VerifiedApiKey {
  id: string;
  ownerId: string;
  role: Role;
  credentialVersion: number;
  scopes: string[];
  /** Epoch ms; null: never. */
  expiresAt: number | null;
}

type Answer = { key: VerifiedApiKey; checkedAt: number } | { refused: 'unknown' | 'revoked' | 'expired'; checkedAt: number };

export interface ApiKeyCheckOptions {
  usersUrl: string;
  /** The gateway's outgoing-call factory; without it, one is made with `serviceToken`. */
  calls?: OutgoingCalls;
  serviceToken?: () => Promise<string>;
  /** JWT_SECRET: signs the owner's access token the services get instead of the key. */
  jwtSecret: string;
  /** How long an answer is trusted (the revocation bound when no push arrives). */
  cacheMs: number;
  logger: Logger;
  /** Longest wait for users-service's answer; then 503. */
  timeoutMs?: number;
  maxKeys?: number;
}

/** Lifetime of the owner's access token the gateway forwards: a minute, renewed at half of it. */
const FORWARDED_TOKEN_TTL_S = 60;

const REFUSALS = {
  unknown: 'The API key is not valid.',
  revoked: 'The API key was revoked.',
  expired: 'The API key has expired.',
};

/**
 * The key a request carries, or undefined. Both headers at once, or a key beside a token, is
 * refused: a request acts as one caller.
 */
export function apiKeyOf(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  const authorization = req.headers.authorization?.trim();
  const bearer = authorization && /^Bearer\s+/i.test(authorization) ? authorization.replace(/^Bearer\s+/i, '') : undefined;
  if (header !== undefined) {
    if (authorization) throw ApiError.unauthenticated('Send one credential: X-Api-Key or Authorization, not both.');
    return String(header).trim();
  }
  return bearer !== undefined && looksLikeApiKey(bearer) ? bearer : undefined;
}

export class ApiKeyCheck {
  private readonly answers = new Map<string, Answer>();
  private readonly pending = new Map<string, Promise<Answer | undefined>>();
  /** Keys revoked by a push; ids are never reused, so an entry stays true. */
  private readonly revokedIds = new Set<string>();
  private readonly forwardedTokens = new Map<string, { token: Promise<string>; renewAt: number }>();

  private readonly users: HttpTarget;

  constructor(private readonly options: ApiKeyCheckOptions) {
    this.users = (options.calls ?? createOutgoingCalls({ serviceToken: options.serviceToken })).http('users', options.usersUrl);
  }

  /** The key's owner and scopes; 401 for a malformed, unknown, revoked or expired key; 503 when no answer younger than the bound can be had. */
  async verify(text: string): Promise<VerifiedApiKey> {
    const id = apiKeyIdOf(text);
    if (!id) throw ApiError.unauthenticated('The API key is malformed (a character is wrong or missing): send the key exactly as it was issued.');
    if (this.revokedIds.has(id)) throw ApiError.unauthenticated(REFUSALS.revoked);
    const cacheKey = createHash('sha256').update(text).digest('base64url');
    let answer = this.answers.get(cacheKey);
    if (!answer || Date.now() - answer.checkedAt >= this.options.cacheMs) answer = await this.lookUp(cacheKey, text);
    if (!answer) throw new ApiError('SERVICE_UNAVAILABLE', 'Whether this API key is valid cannot be checked right now; retry shortly.', { headers: { ...RETRY_AFTER_HEADER } });
    if ('refused' in answer) throw ApiError.unauthenticated(REFUSALS[answer.refused]);
    // A push that came while the lookup was under way wins over its answer.
    if (this.revokedIds.has(answer.key.id)) throw ApiError.unauthenticated(REFUSALS.revoked);
    if (answer.key.expiresAt !== null && answer.key.expiresAt <= Date.now()) throw ApiError.unauthenticated(REFUSALS.expired);
    return answer.key;
  }

  /** A revocation users-service pushed: refused from now on, whatever is cached. */
  revoked(id: string): void {
    if (this.revokedIds.size >= (this.options.maxKeys ?? 100_000)) this.revokedIds.delete(this.revokedIds.values().next().value as string);
    this.revokedIds.add(id);
    this.forwardedTokens.delete(id);
  }

  /** Every answer may have missed a revocation (the push was interrupted): ask again for each. */
  forgetAll(): void {
    this.answers.clear();
    this.pending.clear();
  }

  /** The owner's access token the services get in place of the key (renewed at half its life). */
  accessTokenFor(key: VerifiedApiKey): Promise<string> {
    let current = this.forwardedTokens.get(key.id);
    if (!current || Date.now() >= current.renewAt) {
      const token = issueAccessToken(this.options.jwtSecret, { userId: key.ownerId, role: key.role, credentialVersion: key.credentialVersion }, FORWARDED_TOKEN_TTL_S).then((issued) => issued.accessToken);
      current = { token, renewAt: Date.now() + (FORWARDED_TOKEN_TTL_S * 1000) / 2 };
      if (this.forwardedTokens.size >= (this.options.maxKeys ?? 100_000)) this.forwardedTokens.delete(this.forwardedTokens.keys().next().value as string);
      this.forwardedTokens.set(key.id, current);
    }
    return current.token;
  }

  private lookUp(cacheKey: string, text: string): Promise<Answer | undefined> {
    let lookup = this.pending.get(cacheKey);
    if (!lookup) {
      const started = this.fetchAnswer(text).then((answer) => {
        if (answer) {
          this.answers.delete(cacheKey); // re-inserted last: the oldest entry is the first evicted
          if (this.answers.size >= (this.options.maxKeys ?? 100_000)) this.answers.delete(this.answers.keys().next().value as string);
          this.answers.set(cacheKey, answer);
        }
        return answer;
      });
      lookup = started.finally(() => {
        if (this.pending.get(cacheKey) === lookup) this.pending.delete(cacheKey);
      });
      this.pending.set(cacheKey, lookup);
    }
    return lookup;
  }

  private async fetchAnswer(key: string): Promise<Answer | undefined> {
    try {
      const res = await this.users.request({
        operation: 'api-key-verification',
        method: 'POST',
        path: '/internal/api-key-verifications',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key }),
        credential: 'service',
        timeoutMs: this.options.timeoutMs ?? 1_000,
        json: true,
      });
      if (res.status >= 300) throw new Error(`users-service answered ${res.status}`);
      const answer = res.body as { valid: true; id: string; ownerId: string; role: Role; credentialVersion: number; scopes: string[]; expiresAt: string | null } | { valid: false; reason: 'unknown' | 'revoked' | 'expired' };
      const checkedAt = Date.now();
      if (!answer.valid) return { refused: answer.reason, checkedAt };
      return { key: { id: answer.id, ownerId: answer.ownerId, role: answer.role, credentialVersion: answer.credentialVersion, scopes: answer.scopes, expiresAt: answer.expiresAt ? Date.parse(answer.expiresAt) : null }, checkedAt };
    } catch (error) {
      this.options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'API key check: users-service did not answer; requests with this key are refused (503) until it does');
      return undefined;
    }
  }
}

/** GraphQL root fields by the resource they read or write: a key's scopes are checked against them. */
export const graphqlRootResources: Record<string, ScopedResource> = {
  me: 'users',
  user: 'users',
  updateMe: 'users',
  order: 'orders',
  orders: 'orders',
  createOrder: 'orders',
  cancelOrder: 'orders',
  updateOrder: 'orders',
  product: 'products',
  createReview: 'products',
};

/**
 * Object types that are a resource's data wherever they are selected (an order's `user`): an API
 * key needs that resource's read scope for their fields, except the ones named here as open. Else
 * an `orders:read` key read every customer's email, phone and address through `orders { user }`,
 * which `GET /v1/users` refuses it without `users:read`.
 */
export const graphqlTypeResources: Record<string, { resource: ScopedResource; open: readonly string[] }> = {
  User: { resource: 'users', open: ['id', 'name'] },
};

function missingScope(scope: string): ApiError {
  return ApiError.forbidden(`This API key lacks the scope ${scope}.`);
}

/**
 * 403 unless the key's scopes cover the route: GET and HEAD (and a POST that only reads, a
 * search) need `<resource>:read`, every other method `<resource>:write`. A route without a resource (key management, or one nobody has
 * classified yet) is refused to keys: an unclassified route never passes by accident.
 */
export function assertRouteScope(key: { scopes: string[] }, route: { resource?: ScopedResource | 'api-keys'; readsOnly?: boolean }, method: string): void {
  if (route.resource === undefined || route.resource === 'api-keys') throw ApiError.forbidden('API keys cannot be used here: sign in with a token (POST /v1/tokens).');
  const scope = scopeFor(route.resource, method !== 'GET' && method !== 'HEAD' && !route.readsOnly);
  if (!key.scopes.includes(scope)) throw missingScope(scope);
}

/**
 * 403 unless the key's scopes cover every root field (a query reads, a mutation writes; an
 * unclassified root field is refused) and, at any depth, the fields of a resource's types
 * (graphqlTypeResources: read) unless every root field is of that resource.
 */
export function assertGraphQLScopes(key: { scopes: string[] }, operation: { type: string; rootFields: string[]; outputFields: ReadonlySet<string> }): void {
  for (const field of operation.rootFields) {
    const resource = graphqlRootResources[field];
    if (!resource) throw ApiError.forbidden(`API keys cannot select ${field}: sign in with a token (POST /v1/tokens).`);
    const scope = scopeFor(resource, operation.type !== 'query');
    if (!key.scopes.includes(scope)) throw missingScope(scope);
  }
  // Root fields of one resource only (`me`, `user`, `updateMe`): the scope checked above covers the
  // resource's own data they return, as REST's GET and PATCH /v1/users/{id} answer the user with
  // users:read or users:write. Beside another resource's, its types need their read scope.
  const rootResources = new Set(operation.rootFields.map((field) => graphqlRootResources[field]));
  for (const element of operation.outputFields) {
    const [, type, field] = /^graphql:([^.]+)\.(.+)$/.exec(element) ?? [];
    const owned = graphqlTypeResources[type];
    if (!owned || owned.open.includes(field)) continue;
    if (rootResources.size === 1 && rootResources.has(owned.resource)) continue;
    const scope = scopeFor(owned.resource, false);
    if (!key.scopes.includes(scope)) throw missingScope(scope);
  }
}
