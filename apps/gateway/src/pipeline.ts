// The gateway's own pipeline steps, in the order app.ts runs them. Proxied requests are never
// body-parsed (the token route's body excepted): a body is read whole, as bytes, before its
// request takes a connection to a service, and forwarded as it came.
import { AsyncResource } from 'node:async_hooks';
import { Readable } from 'node:stream';
import type { Request, RequestHandler } from 'express';
import { principalOf, requireAdmin, type TokenVerifier } from '@platform/auth';
import type { Endpoint } from '@platform/endpoints';
import { ApiError, MAX_BODY_BYTES } from '@platform/errors';
import { canonicalId } from '@platform/ids';
import { inOrder, parseJsonBody, TIMEOUT_HEADER } from '@platform/service-kit';
import { noQueryParameters, parseQuery } from '@platform/validation';
import { type ApiKeyCheck, apiKeyOf, assertRouteScope } from './auth/api-keys';
import type { CallerCredentials } from './auth/credentials';
import { byCaller } from './rate-limit/policies';
import { forwardedJson } from './request-state';
import type { CompiledRoute, RouteTable } from './routing/router';

/** Headers only the gateway sets for a service; a client's are dropped, never believed. */
const INTERNAL_HEADERS = [TIMEOUT_HEADER, 'x-forwarded-prefix'];
/** Headers only a proxy in front of the gateway may set. */
const PROXY_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-port', 'forwarded'];

/**
 * First step: a client cannot set the deadline, prefix or forwarding facts the gateway and the
 * services act on. X-Forwarded-* stay only when the peer is a trusted proxy (`trust proxy`).
 */
export function dropInternalHeaders(trustProxy: (address: string, hop: number) => boolean): RequestHandler {
  return (req, _res, next) => {
    const headers = req.headers;
    for (const name of INTERNAL_HEADERS) if (headers[name] !== undefined) delete headers[name];
    if (PROXY_HEADERS.some((name) => headers[name] !== undefined) && !trustProxy(req.socket.remoteAddress ?? '', 0)) {
      for (const name of PROXY_HEADERS) delete headers[name];
    }
    next();
  };
}

/** A year, and subdomains too: the shape HSTS preload lists ask for. */
const HSTS_POLICY = 'max-age=31536000; includeSubDomains';

/**
 * Strict-Transport-Security on every answer to a request that came over HTTPS: at the Ingress,
 * which terminates TLS and says so in X-Forwarded-Proto, believed only from a trusted proxy
 * (`req.secure` follows `trust proxy`). Over plain HTTP browsers ignore the header, so none is sent.
 */
export const strictTransportSecurity: RequestHandler = (req, res, next) => {
  if (req.secure) res.setHeader('Strict-Transport-Security', HSTS_POLICY);
  next();
};

/**
 * 400 for a request the gateway cannot forward as it read it: a transfer coding other than
 * chunked (Node's parser refuses the other ambiguous framings itself), or a path whose
 * %-encoding does not decode.
 */
export const requireWellFormedRequest: RequestHandler = (req, _res, next) => {
  const transferEncoding = req.headers['transfer-encoding'];
  if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
    throw new ApiError('MALFORMED_REQUEST', 'Transfer-Encoding may only be chunked.', { headers: { Connection: 'close' } });
  }
  if (req.url.includes('%')) {
    try {
      decodeURIComponent(req.path);
    } catch {
      throw new ApiError('MALFORMED_REQUEST', 'The path has a malformed %-encoding.');
    }
  }
  next();
};

/** 413 before a byte is read when Content-Length says the body is over 1 MiB (a chunked body is counted as it is received). */
export const limitBodySize: RequestHandler = (req, _res, next) => {
  if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    // The refused body is read and discarded rather than the connection closed under it: a client
    // still sending would otherwise meet a reset and never read this 413 (RFC 9112 §9.6). Reading
    // is bounded by the server's time to receive a request (REQUEST_TIMEOUT_MS).
    throw ApiError.payloadTooLarge();
  }
  next();
};

export interface BodyReceiving {
  /** Time the body has to arrive before the minimum rate extends it. */
  timeoutMs: number;
  /** Each of these bytes received adds one second to the body's time. */
  minBytesPerS: number;
  /** Bytes of bodies held at once by this gateway, all requests together. */
  maxBufferedBytes: number;
}

const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** One request's body as the buffer counts it: its bytes, and how to refuse it while it still arrives. */
interface HeldBody {
  bytes: number;
  arriving: boolean;
  refuse: (error: ApiError) => void;
}

const bufferFull = () => new ApiError('SERVICE_UNAVAILABLE', 'The gateway is receiving too many request bodies at once; retry shortly.', { headers: { 'Retry-After': '1', Connection: 'close' } });

/**
 * The bytes of request bodies the gateway holds at once, shared between callers (byCaller) as
 * fair-share.ts shares a service's queue: when a byte would go past `maxBytes`, the caller holding
 * the most gives up its newest body still arriving (503) to make room for a caller holding less;
 * a caller that holds the most itself is refused. One pool for everyone let four accounts × 64
 * in-flight bodies of 1 MiB, sent almost whole and then stalled, refuse every other user's body.
 */
class BodyBuffer {
  private total = 0;
  private readonly byCaller = new Map<string, { bytes: number; bodies: Set<HeldBody> }>();

  constructor(private readonly maxBytes: number) {}

  /** Counts `bytes` more of `body`; false when no room can be made for them. */
  take(caller: string, body: HeldBody, bytes: number): boolean {
    const own = this.byCaller.get(caller) ?? { bytes: 0, bodies: new Set<HeldBody>() };
    while (this.total + bytes > this.maxBytes) {
      let biggest: { bytes: number; bodies: Set<HeldBody> } | undefined;
      for (const [other, held] of this.byCaller) {
        if (other !== caller && held.bytes > own.bytes + bytes && held.bytes > (biggest?.bytes ?? 0) && [...held.bodies].some((each) => each.arriving)) biggest = held;
      }
      const newest = biggest && [...biggest.bodies].reverse().find((each) => each.arriving);
      if (!newest) return false;
      newest.refuse(bufferFull()); // gives its bytes back at once (release)
    }
    own.bodies.add(body);
    own.bytes += bytes;
    body.bytes += bytes;
    this.total += bytes;
    this.byCaller.set(caller, own);
    return true;
  }

  /** Gives back what `body` holds: its exchange is over, or it was refused and its bytes dropped. */
  release(caller: string, body: HeldBody): void {
    const own = this.byCaller.get(caller);
    if (!own?.bodies.delete(body)) return;
    own.bytes -= body.bytes;
    this.total -= body.bytes;
    if (own.bodies.size === 0) this.byCaller.delete(caller);
  }
}

/**
 * Reads a request's body whole before the request goes further, so that a connection to a
 * service, or a place in its queue, is only ever taken by a request that has fully arrived: a
 * client trickling its body holds its own connection and its own in-flight slot, nothing that
 * other callers share. The body must keep a minimum rate (Apache's mod_reqtimeout `MinRate`):
 * its time is `timeoutMs` plus one second per `minBytesPerS` bytes received. A slower body is cut
 * with 408 and its connection closed; one over 1 MiB with 413; while the gateway already holds
 * `maxBufferedBytes` of bodies, a byte is refused with 503, or makes room by refusing the newest
 * body of the caller holding the most (BodyBuffer). GraphQL's body too: it takes no service
 * connection while it arrives, but it is memory all the same (parseReceivedJson reads it after).
 */
export function receiveBody(options: BodyReceiving): RequestHandler {
  const buffer = new BodyBuffer(options.maxBufferedBytes);
  return (req, res, next) => {
    if (res.locals.forwardBody || !hasBody(req)) return next();
    const caller = byCaller(req, res);
    let chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const started = Date.now();
    // Called from the body's events, which Node emits in the connection's async context, not the
    // request's: bound to the request's, so what runs next (the proxy) still has its deadline and
    // trace (service-kit's request context, OpenTelemetry's), as raw-body does for body-parser.
    const settle = AsyncResource.bind((error?: ApiError) => {
      if (settled) return;
      settled = true;
      held.arriving = false;
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (!error) {
        res.locals.forwardBody = Buffer.concat(chunks, received);
        chunks = []; // held once, in forwardBody, until the exchange ends
        return next();
      }
      // The rest of the body is not read, and what was is dropped: the connection closes after the answer.
      chunks = [];
      buffer.release(caller, held);
      req.pause();
      res.shouldKeepAlive = false;
      next(error);
    });
    const held: HeldBody = { bytes: 0, arriving: true, refuse: settle };
    // What a forwarded body holds is given back when its exchange is over.
    res.once('close', () => buffer.release(caller, held));
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > MAX_BODY_BYTES) return settle(ApiError.payloadTooLarge());
      if (!buffer.take(caller, held, chunk.length)) return settle(bufferFull());
      chunks.push(chunk);
    };
    const onEnd = () => settle();
    // The client left mid-body: nobody is there to answer.
    const onError = () => settle(new ApiError('REQUEST_TIMEOUT', 'The request body was cut short.'));
    const onClose = () => settle(new ApiError('REQUEST_TIMEOUT', 'The request body was cut short.'));
    const deadline = () => started + options.timeoutMs + (received * 1000) / options.minBytesPerS;
    let timer: NodeJS.Timeout;
    const check = () => {
      const left = deadline() - Date.now();
      if (left > 0) timer = setTimeout(check, left);
      else settle(new ApiError('REQUEST_TIMEOUT', `The request body did not arrive in time: it must come within ${options.timeoutMs} ms plus one second per ${options.minBytesPerS} bytes.`, { headers: { Connection: 'close' } }));
    };
    timer = setTimeout(check, options.timeoutMs);
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  };
}

/**
 * parseJsonBody over the bytes receiveBody read (the GraphQL route's body), with every refusal it
 * gives a body read from the request: body-parser reads a stream with the request's headers, so
 * it is handed one that replays those bytes.
 */
export function parseReceivedJson(options: Parameters<typeof parseJsonBody>[0]): RequestHandler {
  const parse = parseJsonBody(options);
  return (req, res, next) => {
    const received = res.locals.forwardBody;
    if (!received) return parse(req, res, next);
    const replay = Object.assign(Readable.from([received]), { headers: req.headers, method: req.method, body: undefined as unknown });
    parse(replay as unknown as Request, res, (error?: unknown) => {
      req.body = replay.body;
      next(error);
    });
  };
}

/**
 * `/<version>/...` → the route of the table in that version (a version no route is declared for is
 * 404 UNSUPPORTED_VERSION); `/graphql` is kept as an alias of `/v1/graphql`.
 */
export function routeRequest(routes: RouteTable): RequestHandler {
  return (req, res, next) => {
    const versioned = /^\/(v\d+)(?=\/|$)(.*)$/.exec(req.path);
    if (!versioned && req.path !== '/graphql') throw new ApiError('NOT_FOUND', `No resource at ${req.path}; the API lives under /${routes.versions.join(', /')}.`);
    const version = versioned ? versioned[1] : 'v1';
    const route = routes.match(version, req.method, versioned ? versioned[2] || '/' : req.path);
    res.locals.route = route;
    res.locals.apiVersion = versioned ? route.servedAs : undefined;
    res.locals.routePattern = versioned ? `/${route.servedAs}${route.pattern}` : route.pattern;
    for (const [name, value] of route.headers) res.setHeader(name, value);
    next();
  };
}

/**
 * Reads the credential if one is sent: an issued API key (X-Api-Key, or a bearer value starting
 * `opk_`) or a bearer token. A token its account outlived (a changed password, a deleted user) is
 * refused, and so is a key that is malformed, unknown, revoked, expired or whose owner is gone.
 * Whether a credential is required is decided after rate limiting.
 *
 * A key acts as its owner: the principal is the owner, the rate limits and the in-flight share
 * count the owner (`user:<id>`, as for the owner's token: however many keys an account makes,
 * it has one budget), and the services get a short-lived access token for the owner in place of
 * the key, which never leaves the gateway (auth/api-keys.ts). Usage is still recorded per key.
 */
export function identifyCaller(verifier: TokenVerifier, credentials: CallerCredentials, apiKeys: ApiKeyCheck): RequestHandler {
  return async (req, res, next) => {
    try {
      const keyText = apiKeyOf(req);
      if (keyText !== undefined) {
        const key = await apiKeys.verify(keyText);
        await credentials.assertOwnerExists(key.ownerId);
        res.locals.principal = { userId: key.ownerId, role: key.role, expiresAt: Math.floor((key.expiresAt ?? Date.now() + 3_600_000) / 1000), credentialVersion: key.credentialVersion };
        res.locals.apiKey = { id: key.id, ownerId: key.ownerId, scopes: key.scopes };
        req.headers.authorization = `Bearer ${await apiKeys.accessTokenFor(key)}`;
        delete req.headers['x-api-key'];
      } else if (req.headers.authorization) {
        const principal = await verifier.verifyHeader(req.headers.authorization);
        await credentials.assertCurrent(principal);
        res.locals.principal = principal;
      }
    } catch (error) {
      // A credential that does not work is never passed on, whatever the route.
      delete req.headers['x-api-key'];
      res.locals.authError = error;
    }
    next();
  };
}

/**
 * 403 FORBIDDEN when an API key's scopes do not cover the route (GraphQL is checked per root
 * field once its operation is known: app.ts). Public routes need no scope.
 */
export const requireApiKeyScope: RequestHandler = (req, res, next) => {
  const route = res.locals.route as CompiledRoute;
  const key = res.locals.apiKey;
  if (key && route.auth !== 'public' && route.upstream !== 'graphql') assertRouteScope(key, route, req.method);
  next();
};

/** 401 for routes that need a token when none (or a bad one) came. */
export const requireAuthentication: RequestHandler = (_req, res, next) => {
  const route = res.locals.route as CompiledRoute;
  if (route.auth !== 'public' && !res.locals.principal) throw res.locals.authError ?? ApiError.unauthenticated();
  next();
};

/**
 * The embedded default's revocation push (no Redis, one gateway): a password change or deletion
 * goes through PATCH/PUT/DELETE /v1/users/:id, so once one succeeds the gateway forgets that user's
 * credential answer and asks users-service on the user's next request (auth/credentials.ts).
 */
export function forgetCredentialsAfterUserWrite(credentials: CallerCredentials): RequestHandler {
  return (req, res, next) => {
    const route = res.locals.route as CompiledRoute;
    if (route.pattern === '/users/:id' && req.method !== 'GET' && req.method !== 'HEAD') {
      // Canonical, as users-service reads an id sent in any case (idField): the answer is cached by the id it stores.
      const id = decodeURIComponent(req.path.replace(/\/$/, '').split('/').pop() ?? '');
      const userId = id === 'me' ? res.locals.principal?.userId : canonicalId(id);
      // Emitted as the answer leaves, before the client can send its next request.
      res.once('finish', () => {
        if (userId && res.statusCode < 300) credentials.forget(userId);
      });
    }
    next();
  };
}

/**
 * 403 when an API key would take over its owner's account: delete it, or change its password (a
 * leaked key must not lock its owner out). Read from the received body as the service will read
 * it (its charset, a byte-order mark); a body the gateway cannot read so is refused here (400),
 * never passed on for the service to read another way.
 */
export const keepAccountsFromApiKeys: RequestHandler = (req, res, next) => {
  const route = res.locals.route as CompiledRoute;
  if (!res.locals.apiKey || route.pattern !== '/users/:id' || req.method === 'GET' || req.method === 'HEAD') return next();
  if (req.method === 'DELETE') throw ApiError.forbidden("An API key cannot delete its owner's account: sign in with a token (POST /v1/tokens).");
  const read = forwardedJson(req, res);
  if (read.refusal) throw read.refusal;
  const body = read.value;
  if (body && typeof body === 'object' && Object.hasOwn(body, 'password')) throw ApiError.forbidden("An API key cannot change its owner's password: sign in with a token (POST /v1/tokens).");
  next();
};

/**
 * The embedded default's API key revocation (no Redis, one gateway), as for users above: once a
 * DELETE /v1/api-keys/:id, or a rotation that ends the old key at once (`overlapSeconds: 0`),
 * succeeds here, this gateway refuses the key from the next request on.
 */
export function revokeApiKeysAfterWrite(apiKeys: Pick<ApiKeyCheck, 'revoked'>): RequestHandler {
  return (req, res, next) => {
    const route = res.locals.route as CompiledRoute;
    const id = /^\/api-keys\/([^/]+)/.exec(req.path.replace(/^\/v\d+/, ''))?.[1];
    const endsNow = () => {
      if (route.pattern === '/api-keys/:id' && req.method === 'DELETE') return true;
      if (route.pattern !== '/api-keys/:id/rotation') return false;
      const body = forwardedJson(req, res).value as { overlapSeconds?: unknown } | null | undefined;
      return body?.overlapSeconds === 0;
    };
    if (id && endsNow()) {
      res.once('finish', () => {
        // Canonical, as users-service reads a key id sent in any case (idField): the id verify() meets.
        if (res.statusCode < 300) apiKeys.revoked(canonicalId(decodeURIComponent(id)));
      });
    }
    next();
  };
}

/**
 * Hands the request to what serves its route. The services check their own endpoints' callers and
 * queries; the gateway's own endpoints (`own`, declared in routing/gateway-endpoints.ts) have
 * theirs checked here, from the same declarations and in the services' order: 403 for a customer
 * on an admin endpoint, then 400 UNKNOWN_PARAMETER for a parameter it does not take. GraphQL's
 * endpoints are left to the graph, which answers in GraphQL's own format.
 */
export function dispatch(handlers: Record<CompiledRoute['upstream'], RequestHandler | RequestHandler[]>, own: readonly Endpoint[]): RequestHandler {
  const handlerOf = Object.fromEntries(Object.entries(handlers).map(([upstream, handler]) => [upstream, Array.isArray(handler) ? inOrder(handler) : handler]));
  const ownEndpoint = new Map(own.filter((endpoint) => !endpoint.graphqlErrors).map((endpoint) => [`${endpoint.method} ${endpoint.path}`, endpoint]));
  return (req, res, next) => {
    const route = res.locals.route as CompiledRoute;
    const handler = handlerOf[route.upstream];
    if (!handler) return next();
    const endpoint = ownEndpoint.get(`${req.method === 'HEAD' ? 'GET' : req.method} ${route.pattern}`);
    if (endpoint) {
      if (endpoint.access === 'admin') requireAdmin(principalOf(res));
      parseQuery(endpoint.query ?? noQueryParameters, req.query);
    }
    return handler(req, res, next);
  };
}
