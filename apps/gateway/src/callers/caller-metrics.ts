// Who still calls what: requests by API version, route, status and client, so retiring an
// endpoint or a version starts from data. The client is the User-Agent's product/version
// (the spec asks callers to send one) or, without it, the token's subject.
import type { RequestHandler } from 'express';
import { Counter, type Registry } from 'prom-client';
import type { Principal } from '@platform/auth';

const MAX_CLIENTS = 500;

export function callerMetrics(registry: Registry): RequestHandler {
  const requests = new Counter({
    name: 'gateway_requests_total',
    help: 'Requests answered by the gateway, by API version, route, status and client',
    labelNames: ['version', 'route', 'method', 'status', 'client'],
    registers: [registry],
  });
  const seen = new Set<string>();
  const clientOf = (userAgent: string | undefined, principal: Principal | undefined): string => {
    const product = userAgent ? /^([\w.-]{1,40})\/([\w.-]{1,20})/.exec(userAgent) : null;
    const client = product ? `${product[1]}/${product[2]}` : principal ? `sub:${principal.userId}` : 'anonymous';
    // Bounded label cardinality: past the cap, new clients are counted together.
    if (seen.has(client)) return client;
    if (seen.size >= MAX_CLIENTS) return 'other';
    seen.add(client);
    return client;
  };
  return (req, res, next) => {
    res.on('finish', () => {
      requests.inc({
        version: (res.locals.apiVersion as string | undefined) ?? 'none',
        route: (res.locals.route as { pattern?: string } | undefined)?.pattern ?? 'unmatched',
        method: req.method,
        status: String(res.statusCode),
        client: clientOf(req.headers['user-agent'], res.locals.principal as Principal | undefined),
      });
    });
    next();
  };
}
