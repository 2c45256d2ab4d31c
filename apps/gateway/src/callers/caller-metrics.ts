// Who still calls what: requests by API version, route, status and client, so retiring an
// endpoint or a version starts from data. The client is the product/version an authenticated
// caller's User-Agent starts with (the spec asks callers to send one), when it has the shape of
// one. Labels never carry who the caller is (no user ids), and their values are bounded: an
// unauthenticated caller is `anonymous` whatever it sends, any other User-Agent is `other`.
import type { RequestHandler } from 'express';
import { Counter, type Registry } from 'prom-client';

/** `name/1.2.3`: a product name and a numeric version of at most four parts. */
const CLIENT_SHAPE = /^([A-Za-z][\w.-]{0,39})\/(\d{1,6}(?:\.\d{1,6}){0,3})(?![\w.-])/;
const MAX_CLIENTS = 200;

export function callerMetrics(registry: Registry): RequestHandler {
  const requests = new Counter({
    name: 'gateway_requests_total',
    help: 'Requests answered by the gateway, by API version, route, status and client',
    labelNames: ['version', 'route', 'method', 'status', 'client'],
    registers: [registry],
  });
  const seen = new Set<string>();
  const clientOf = (userAgent: string | undefined, authenticated: boolean): string => {
    if (!authenticated) return 'anonymous';
    const product = userAgent ? CLIENT_SHAPE.exec(userAgent) : null;
    if (!product) return 'other';
    const client = `${product[1]}/${product[2]}`;
    // Bounded label cardinality: past the cap, new clients are counted together.
    if (seen.has(client)) return client;
    if (seen.size >= MAX_CLIENTS) return 'other';
    seen.add(client);
    return client;
  };
  return (req, res, next) => {
    res.on('finish', () => {
      requests.inc({
        version: res.locals.apiVersion ?? 'none',
        route: res.locals.route?.pattern ?? 'unmatched',
        method: req.method,
        status: String(res.statusCode),
        client: clientOf(req.headers['user-agent'], res.locals.principal !== undefined),
      });
    });
    next();
  };
}
