// The gateway's rate-limit policy, all of it: who is counted, under which key, how much they get.
//
// - `default`: every route but the token route; 100 requests per 10 s (RATE_LIMIT_POINTS,
//   RATE_LIMIT_WINDOW_S) per user when the token is valid, else per client IP.
// - `tokens`: POST /v1/tokens, per email: 10 per 60 s (RATE_LIMIT_TOKENS_POINTS, ..._WINDOW_S),
//   against guessing one account's password;
// - `tokens-ip`: the same route, per client IP: 100 per 60 s (RATE_LIMIT_TOKENS_IP_POINTS),
//   against spraying many accounts (higher, as offices share an address).
// - In flight: at most MAX_IN_FLIGHT_PER_CALLER requests of one caller at once, so a few callers
//   cannot hold every connection.
// - GraphQL spends the `default` budget by the work asked, so no surface does more in a window than
//   REST allows: each mutation field is one point, as its REST call would be (16 aliased
//   createOrder are 16 points, and over MAX_MUTATION_FIELDS, 5, refused before any runs); a query
//   costs one point per GRAPHQL_COST_PER_POINT (100) of its cost (extensions.cost.requested),
//   rounded up, as Shopify's cost bucket charges by computed cost: `{ me { id name } }` (cost 4)
//   is 1 point like GET /v1/users/me, `orders(first: 100)` with a few fields about 5, the largest
//   query allowed (5,000) 50. The request's own point, taken by `rateLimit` like any call's, is
//   the first of them; the rest are taken once the operation is validated, before it runs.
// A route names its policy in the route table (`policy: 'tokens'`; `default` otherwise). How the
// counts are kept (Redis shared by the replicas, memory as the fallback) is rate-limits.ts.
import type { Request, RequestHandler, Response } from 'express';
import { ApiError } from '@platform/errors';
import type { OperationWork } from '@platform/graphql-gateway';
import { parseJsonBody } from '@platform/service-kit';
import type { CompiledRoute } from '../routing/router';
import type { Policy, RateLimits } from './rate-limits';

/** What a route may name in the route table. */
export type RoutePolicyName = 'default' | 'tokens';
export type PolicyName = RoutePolicyName | 'tokens-ip';

/** The policies the gateway enforces, from its settings: one place that says what each limit is. */
export function policiesOf(config: {
  RATE_LIMIT_POINTS: number;
  RATE_LIMIT_WINDOW_S: number;
  RATE_LIMIT_TOKENS_POINTS: number;
  RATE_LIMIT_TOKENS_IP_POINTS: number;
  RATE_LIMIT_TOKENS_WINDOW_S: number;
}): Record<PolicyName, Policy> {
  return {
    default: { points: config.RATE_LIMIT_POINTS, windowS: config.RATE_LIMIT_WINDOW_S },
    // Token requests per email: guessing one account's password.
    tokens: { points: config.RATE_LIMIT_TOKENS_POINTS, windowS: config.RATE_LIMIT_TOKENS_WINDOW_S },
    // Token requests per client IP: spraying many accounts (higher, as offices share an IP).
    'tokens-ip': { points: config.RATE_LIMIT_TOKENS_IP_POINTS, windowS: config.RATE_LIMIT_TOKENS_WINDOW_S },
  };
}

/** Whose budgets a request spends: the user's with a token, the client IP's without. */
function callerOf(req: Request, res: Response): string {
  const principal = res.locals.principal;
  return (res.locals.caller ??= principal ? `user:${principal.userId}` : `ip:${req.ip}`);
}

/** 429 past `maxPerCaller` requests in flight for one caller: a few callers cannot hold every connection. */
export function limitInFlight(maxPerCaller: number): RequestHandler {
  const inFlight = new Map<string, number>();
  return (req, res, next) => {
    const caller = callerOf(req, res);
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

/**
 * One point of the default policy per request, keyed by client address, for what the gateway
 * serves before routing (the /docs pages and their assets): bounded like any other request.
 */
export function rateLimitByAddress(limits: RateLimits): RequestHandler {
  return async (req, res, next) => {
    for (const [name, value] of (await limits.consume('default', `ip:${req.ip}`)).headers) res.setHeader(name, value);
    next();
  };
}

/** Reads a token request as the users service will (any JSON media type), keeping its bytes to forward as they came. */
const readTokenRequest = parseJsonBody({
  limit: '16kb',
  inflate: false,
  verify: (_req, res, body) => void ((res as Response).locals.forwardBody = body),
});

/** One point per request, keyed by user or client IP; the token route is limited per IP and per email. */
export function rateLimit(limits: RateLimits): RequestHandler {
  return async (req, res, next) => {
    const route = res.locals.route as CompiledRoute; // routeRequest ran before
    // A refusal is a 429 ApiError that carries its own RateLimit and Retry-After headers.
    if (route.policy === 'tokens') {
      // A body it cannot read is refused here (400 MALFORMED_JSON, 413, 415). One read without
      // an email can never be granted a token, so it only spends its IP's points.
      await new Promise<void>((resolve, reject) => readTokenRequest(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
      const email = typeof req.body?.email === 'string' ? req.body.email.trim().toLowerCase() : '';
      const [byIp, byEmail] = await Promise.all([limits.consume('tokens-ip', `ip:${req.ip}`), email ? limits.consume('tokens', `email:${email}`) : undefined]);
      for (const [name, value] of (byEmail ?? byIp).headers) res.setHeader(name, value);
    } else {
      for (const [name, value] of (await limits.consume(route.policy ?? 'default', callerOf(req, res))).headers) res.setHeader(name, value);
    }
    next();
  };
}


/** Cost units per rate-limit point for a GraphQL query (see the file's comment). */
export const GRAPHQL_COST_PER_POINT = 100;

/** The points a GraphQL operation spends: one per mutation field, else one per 100 of cost, at least one. */
export function graphqlPointsOf(work: OperationWork): number {
  return Math.max(1, work.mutationFields, Math.ceil(work.cost / GRAPHQL_COST_PER_POINT));
}

/** Charges a validated GraphQL operation the points beyond its request's one; 429 when they are not left. */
export function chargeGraphQLOperation(limits: RateLimits): (req: Request, res: Response, work: OperationWork) => Promise<void> {
  return async (req, res, work) => {
    const beyondTheRequest = graphqlPointsOf(work) - 1;
    if (beyondTheRequest <= 0) return;
    for (const [name, value] of (await limits.consume('default', callerOf(req, res), beyondTheRequest)).headers) res.setHeader(name, value);
  };
}
