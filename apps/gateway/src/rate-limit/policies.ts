// The gateway's rate-limit policies, as data: `policyTable` below is the whole of them. A route
// names its policy in the route table (routing/route-table.ts: `policy: 'sign-in'`; `default`
// when it names none). Adding a policy is one row here, and naming it on its routes.
//
// A row is the limits a request of its routes spends, and its cost rule. A limit is a count of
// points per window, named in the RateLimit-Policy and RateLimit headers and in the metrics, kept
// per key: the key extractor says whose count a request spends (its caller, its client address,
// the e-mail it signs in with). A request spends every limit of its row whose key it has, and the
// first limit that counted it reports its headers; past any one of them it is refused (429). Two
// rows naming one limit share its count: GraphQL and REST spend the same `default` budget. A
// limit's points and window are settings of the one config loader (config.ts reads them from the
// environment, with the defaults written here), so a deployment changes a limit without code.
//
// A request spends its row's limits in order and stops at the first that refuses it. A client
// address is counted whole (IPv4) or by its /64 (IPv6), addressKeyOf.
// - `default`: every route that names no other: 100 points per 10 s (RATE_LIMIT_POINTS,
//   RATE_LIMIT_WINDOW_S) per caller: the user when the token or API key is valid (a key counts
//   as its owner, so more keys bring no more budget), else the client IP. One point per request.
// - `sign-in`: POST /v1/tokens, three limits: `tokens`, per sign-in e-mail (its key as users-service
//   stores and finds it, emailKeyOf from @platform/auth) and client IP, 10 per 60 s
//   (RATE_LIMIT_TOKENS_POINTS, RATE_LIMIT_TOKENS_WINDOW_S), against guessing one account's
//   password, without letting another address lock the account out; `tokens-email`, per e-mail
//   from every address, 100 per 60 s (RATE_LIMIT_TOKENS_EMAIL_POINTS), against guessing it from
//   many addresses (a request `tokens` refuses spends none of it, so locking an account out
//   takes ten addresses, and guessing one account from many gets at most 100 a minute, where one
//   count per e-mail allowed 10 and let anyone lock it); and `tokens-ip`, per
//   client IP, 100 per 60 s (RATE_LIMIT_TOKENS_IP_POINTS), against spraying many accounts (higher,
//   as offices share an address). A request without an e-mail can never be granted a token and
//   spends only its IP's points.
// - `sign-up`: POST /v1/users, the `default` count of its caller and the same `tokens-ip` count as
//   sign-in: a sign-up hashes a password as a sign-in checks one (about 65 ms of CPU and 32 MiB
//   each), so one address asks for at most RATE_LIMIT_TOKENS_IP_POINTS of them a window, with or
//   without an account or API key.
// - `graphql`: /v1/graphql spends the `default` limit by the work asked, so no surface does more in
//   a window than REST allows: each mutation field is one point, as its REST call would be (16
//   aliased createOrder are 16 points, and over MAX_MUTATION_FIELDS, 5, refused before any runs);
//   a query costs one point per GRAPHQL_COST_PER_POINT (100) of its cost (extensions.cost.requested),
//   rounded up, as Shopify's cost bucket charges by computed cost: `{ me { id name } }` (cost 4) is
//   1 point like GET /v1/users/me, `orders(first: 100)` with a few fields about 5, the largest
//   query allowed (5,000) 50. The request's own point is taken at the door like any call's; the
//   rest once the operation is validated, before it runs.
// - `webhook-retry`: POST /v1/webhook-endpoints/{id}/deliveries/{deliveryId}/retry, the
//   `webhook-retries` count per caller, 10 per 60 s (RATE_LIMIT_WEBHOOK_RETRIES_POINTS,
//   RATE_LIMIT_WEBHOOK_RETRIES_WINDOW_S), then the `default` one. Each retry makes the platform
//   POST to the endpoint's URL, any public address the account chose: one delivery is never sent
//   twice at once, but an account with many deliveries retrying them at its `default` budget had
//   the platform send 10 requests a second to a third party, from the platform's addresses. Per
//   caller, not per endpoint: an account's 20 endpoints bring no more budget. First in the row:
//   its headers are the ones reported, so a client sees what it has left of it.
// - `docs`: the reference pages (/docs and their assets, served before routing) spend the
//   `default` limit per client address.
// Besides the table: at most MAX_IN_FLIGHT_PER_CALLER requests of one caller at once
// (limitInFlight), so a few callers cannot hold every connection.
// How the counts are kept (Redis shared by the replicas, memory as the fallback) is rate-limits.ts.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { emailKeyOf } from '@platform/auth';
import { ApiError } from '@platform/errors';
import type { OperationWork } from '@platform/graphql-gateway';
import { parseJsonBody } from '@platform/service-kit';
import { z } from '@platform/validation';
import type { CompiledRoute } from '../routing/router';
import type { LimitSize, RateLimits } from './rate-limits';

/** Whose count a request spends: a key, or undefined when the request has none (the limit does not count it). */
export type KeyExtractor = (req: Request, res: Response) => string | undefined | Promise<string | undefined>;

/** A number the config loader reads from the environment variable `env`, `fallback` when unset. */
interface Setting<Env extends string = string> {
  env: Env;
  fallback: number;
}

const setting = <Env extends string>(env: Env, fallback: number): Setting<Env> => ({ env, fallback });

/** One count of points per window, kept per key. */
export interface Limit {
  /** In RateLimit-Policy and RateLimit, and the metrics' `policy` label. One name, one count: rows naming it share it. */
  name: string;
  key: KeyExtractor;
  points: Setting;
  windowS: Setting;
}

/** What a request of the policy's routes costs, in points of each of its limits. */
export interface CostRule {
  /** Taken when the request arrives, before authentication. */
  request: number;
  /** A GraphQL operation's points in all, its request's among them: the rest is taken once it is validated, before it runs. */
  operation?: (work: OperationWork) => number;
}

export interface PolicyRow {
  limits: readonly Limit[];
  cost: CostRule;
}

/**
 * A client address as the limits count it: an IPv4 address whole, an IPv6 address by its /64 (the
 * block one subscriber is given: every address in it is the same client's, and rotating among
 * them must bring no new budget).
 */
export function addressKeyOf(ip: string | undefined): string {
  const text = (ip ?? '').replace(/%.*$/, '');
  if (!isIP(text)) return `ip:${text.toLowerCase()}`;
  const address = ipaddr.process(text); // an IPv4-mapped IPv6 address is its IPv4 address
  if (address.kind() === 'ipv4') return `ip:${address.toString()}`;
  const prefix = (address as ipaddr.IPv6).parts.slice(0, 4).map((group) => group.toString(16));
  return `ip:${prefix.join(':')}::/64`;
}

/** The user's count with a valid token or API key (a key's owner), else the client address's. */
export const byCaller = (req: Request, res: Response): string => (res.locals.caller ??= res.locals.principal ? `user:${res.locals.principal.userId}` : addressKeyOf(req.ip));

export const byAddress = (req: Request): string => addressKeyOf(req.ip);

/** Reads a token request as the users service will (any JSON media type), keeping its bytes to forward as they came. */
const readTokenRequest = parseJsonBody({
  limit: '16kb',
  inflate: false,
  verify: (_req, res, body) => void ((res as Response).locals.forwardBody = body),
});

/**
 * The e-mail a token request signs in with, as users-service finds its account (emailKeyOf); none
 * without one. Reads the body: one it cannot read is refused here (400 MALFORMED_JSON, 413, 415),
 * before any limit counts it.
 */
export const bySignInEmail: KeyExtractor = async (req, res) => {
  await new Promise<void>((resolve, reject) => readTokenRequest(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
  const email: unknown = req.body?.email;
  const key = typeof email === 'string' ? emailKeyOf(email) : '';
  return key ? `email:${key}` : undefined;
};

/** The sign-in e-mail from one client address: a guesser's count, which no other address spends. */
export const bySignInEmailAndAddress: KeyExtractor = async (req, res) => {
  const email = await bySignInEmail(req, res);
  return email && `${email}|${addressKeyOf(req.ip)}`;
};

/** Cost units per rate-limit point for a GraphQL query (see the file's comment). */
export const GRAPHQL_COST_PER_POINT = 100;

/** The points a GraphQL operation spends: one per mutation field, else one per 100 of cost, at least one. */
export function graphqlPointsOf(work: OperationWork): number {
  return Math.max(1, work.mutationFields, Math.ceil(work.cost / GRAPHQL_COST_PER_POINT));
}

const ONE_POINT_PER_REQUEST: CostRule = { request: 1 };

const perCaller = { name: 'default', key: byCaller, points: setting('RATE_LIMIT_POINTS', 100), windowS: setting('RATE_LIMIT_WINDOW_S', 10) } as const;
/** The password work one client address may ask for (each sign-in and sign-up hashes a password): spraying many accounts, or many sign-ups. */
const passwordWorkPerAddress = { name: 'tokens-ip', key: byAddress, points: setting('RATE_LIMIT_TOKENS_IP_POINTS', 100), windowS: setting('RATE_LIMIT_TOKENS_WINDOW_S', 60) } as const;

/** Every policy: what a route may name (see the file's comment). */
export const policyTable = {
  default: { limits: [perCaller], cost: ONE_POINT_PER_REQUEST },
  'sign-in': {
    limits: [
      // Guessing one account's password from one address. First: its headers are the ones
      // reported. Counted per address too, so that nobody can lock an account out of sign-in by
      // spending its count with wrong passwords from elsewhere.
      { name: 'tokens', key: bySignInEmailAndAddress, points: setting('RATE_LIMIT_TOKENS_POINTS', 10), windowS: setting('RATE_LIMIT_TOKENS_WINDOW_S', 60) },
      // Guessing one account's password from many addresses: a looser bound for the account.
      { name: 'tokens-email', key: bySignInEmail, points: setting('RATE_LIMIT_TOKENS_EMAIL_POINTS', 100), windowS: setting('RATE_LIMIT_TOKENS_WINDOW_S', 60) },
      // Spraying many accounts from one address.
      passwordWorkPerAddress,
    ],
    cost: ONE_POINT_PER_REQUEST,
  },
  // The caller's own count first (its headers are the ones reported), then the address's password
  // work, whatever credential the request carries: an account or API key must not bring a budget
  // of password hashes of its own.
  'sign-up': { limits: [perCaller, passwordWorkPerAddress], cost: ONE_POINT_PER_REQUEST },
  graphql: { limits: [perCaller], cost: { request: 1, operation: graphqlPointsOf } },
  'webhook-retry': {
    limits: [{ name: 'webhook-retries', key: byCaller, points: setting('RATE_LIMIT_WEBHOOK_RETRIES_POINTS', 10), windowS: setting('RATE_LIMIT_WEBHOOK_RETRIES_WINDOW_S', 60) }, perCaller],
    cost: ONE_POINT_PER_REQUEST,
  },
  docs: { limits: [{ ...perCaller, key: byAddress }], cost: ONE_POINT_PER_REQUEST },
} as const satisfies Record<string, PolicyRow>;

export type PolicyName = keyof typeof policyTable;

type TableLimit = (typeof policyTable)[PolicyName]['limits'][number];
/** The environment variables that size the limits. */
export type RateLimitSetting = TableLimit['points']['env'] | TableLimit['windowS']['env'];

const tableLimits: readonly Limit[] = Object.values(policyTable).flatMap((row: PolicyRow) => row.limits);

/** Each limit once, by name; a name sized by two different settings is a mistake in the table. */
const limitsByName = new Map<string, Limit>();
for (const limit of tableLimits) {
  const seen = limitsByName.get(limit.name);
  if (seen && (seen.points.env !== limit.points.env || seen.windowS.env !== limit.windowS.env)) throw new Error(`rate limit "${limit.name}" is sized by two different settings`);
  limitsByName.set(limit.name, limit);
}

const limitSetting = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

/** The limits' settings, for the config loader (config.ts): one per variable, with the table's default. */
export const rateLimitSettings = (() => {
  const settings = new Map<string, Setting>();
  for (const { env, fallback } of tableLimits.flatMap((limit) => [limit.points, limit.windowS])) {
    if (settings.has(env) && settings.get(env)!.fallback !== fallback) throw new Error(`${env} has two defaults in the rate-limit table`);
    settings.set(env, { env, fallback });
  }
  return Object.fromEntries([...settings.values()].map(({ env, fallback }) => [env, limitSetting(fallback)])) as Record<RateLimitSetting, ReturnType<typeof limitSetting>>;
})();

/** Each limit's points and window, by name, from the loaded settings. */
export function limitsOf(config: Record<RateLimitSetting, number>): Record<string, LimitSize> {
  const settings = config as Record<string, number>;
  return Object.fromEntries([...limitsByName.values()].map((limit) => [limit.name, { points: settings[limit.points.env], windowS: settings[limit.windowS.env] }]));
}

/** Spends `points` of each limit of `policy` whose key the request has; the first limit counted sets the RateLimit headers. 429 past any. */
async function spend(limits: RateLimits, policy: PolicyRow, req: Request, res: Response, points: number): Promise<void> {
  // Keys first, in order: a key may read the body, and a body refused is refused before anything is counted.
  const keys: (string | undefined)[] = [];
  for (const limit of policy.limits) keys.push(await limit.key(req, res));
  // In the row's order, and no further than the first refusal (a 429 ApiError that carries its own
  // RateLimit and Retry-After headers): a request one limit refuses spends nothing of the limits
  // after it. So an address refused its attempts at one account spends none of the account's own
  // count (sign-in), and a caller out of its budget none of its address's password work (sign-up).
  let reported: Awaited<ReturnType<RateLimits['consume']>> | undefined;
  for (const [at, limit] of policy.limits.entries()) {
    const key = keys[at];
    if (key === undefined) continue;
    const decision = await limits.consume(limit.name, key, points);
    reported ??= decision;
  }
  for (const [name, value] of reported?.headers ?? []) res.setHeader(name, value);
}

const policyOfRoute = (res: Response): PolicyRow => policyTable[(res.locals.route as CompiledRoute | undefined)?.policy ?? 'default'];

/** The cost rule's request points, of the policy the route names (routeRequest ran before). */
export function rateLimit(limits: RateLimits): RequestHandler {
  return async (req, res, next) => {
    const policy = policyOfRoute(res);
    await spend(limits, policy, req, res, policy.cost.request);
    next();
  };
}

/** The `docs` policy, for what the gateway serves before routing (the /docs pages and their assets): bounded like any other request. */
export function rateLimitByAddress(limits: RateLimits): RequestHandler {
  return async (req, res, next) => {
    await spend(limits, policyTable.docs, req, res, policyTable.docs.cost.request);
    next();
  };
}

/**
 * An error handler for what was refused before `rateLimit` ran (a malformed request, 404, 405,
 * 406, 413, 415): it is charged to the default policy by address, as an unauthenticated request
 * is, and carries the RateLimit headers every answer carries; past the budget it becomes the 429.
 * What was refused later has them already and passes on unchanged, and so does a 429.
 */
export function chargeEarlyRefusals(limits: RateLimits): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    if (res.headersSent || res.hasHeader('RateLimit') || (error instanceof ApiError && error.code === 'RATE_LIMITED')) return next(error);
    // A chunked body still arriving is answered at once, uncounted: a framing error in its rest
    // must meet an answer already under way, not race it for a second one (public-door.test.ts).
    if (!req.complete && req.headers['transfer-encoding'] !== undefined) return next(error);
    spend(limits, policyTable.docs, req, res, policyTable.docs.cost.request).then(
      () => next(error),
      (refusal: unknown) => next(refusal),
    );
  };
}

/** Charges a validated GraphQL operation its cost rule's points beyond its request's; 429 when they are not left. */
export function chargeGraphQLOperation(limits: RateLimits): (req: Request, res: Response, work: OperationWork) => Promise<void> {
  return async (req, res, work) => {
    const policy = policyOfRoute(res);
    const beyondTheRequest = (policy.cost.operation?.(work) ?? 0) - policy.cost.request;
    if (beyondTheRequest > 0) await spend(limits, policy, req, res, beyondTheRequest);
  };
}

/** 429 past `maxPerCaller` requests in flight for one caller: a few callers cannot hold every connection. */
export function limitInFlight(maxPerCaller: number): RequestHandler {
  const inFlight = new Map<string, number>();
  return (req, res, next) => {
    const caller = byCaller(req, res);
    const count = inFlight.get(caller) ?? 0;
    if (count >= maxPerCaller) throw new ApiError('RATE_LIMITED', `At most ${maxPerCaller} requests at once; retry when one has been answered.`, { headers: { 'Retry-After': '1' } });
    inFlight.set(caller, count + 1);
    res.once('close', () => {
      const left = (inFlight.get(caller) ?? 1) - 1;
      if (left > 0) inFlight.set(caller, left);
      else inFlight.delete(caller);
    });
    next();
  };
}
