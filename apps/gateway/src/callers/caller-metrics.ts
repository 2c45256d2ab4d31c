// Who still calls what: requests by API version, route, status and client, so retiring an
// endpoint or a version starts from data. The client is the product/version an authenticated
// caller's User-Agent starts with (the spec asks callers to send one), when it has the shape of
// one. Labels never carry who the caller is (no user ids), and their values are bounded: an
// unauthenticated caller is `anonymous` whatever it sends, any other User-Agent is `other`.
import type { RequestHandler } from 'express';
import type { Principal } from '@platform/auth';
import { ClientChosenLabel, dropSeries } from '@platform/service-kit';
import { Counter, type Registry } from 'prom-client';

/** `name/1.2.3`: a product name and a numeric version of at most four parts. */
const CLIENT_SHAPE = /^([A-Za-z][\w.-]{0,39})\/(\d{1,6}(?:\.\d{1,6}){0,3})(?![\w.-])/;
/** Distinct client labels in all, and how many values any one caller vouches for (ClientChosenLabel). */
export const MAX_CLIENT_LABELS = 200;
const NEW_CLIENTS_PER_CALLER = 5;

export function callerMetrics(registry: Registry): RequestHandler {
  const requests = new Counter({
    name: 'gateway_requests_total',
    help: 'Requests answered by the gateway, by API version, route, status and client',
    labelNames: ['version', 'route', 'method', 'status', 'client'],
    registers: [registry],
  });
  const clients = new ClientChosenLabel(MAX_CLIENT_LABELS, NEW_CLIENTS_PER_CALLER, (client) => void dropSeries(requests, 'client', client));
  const clientOf = (userAgent: string | undefined, caller: string | undefined): string => {
    if (caller === undefined) return 'anonymous';
    const product = userAgent ? CLIENT_SHAPE.exec(userAgent) : null;
    return product ? clients.valueOf(`${product[1]}/${product[2]}`, caller) : 'other';
  };
  return (req, res, next) => {
    res.on('finish', () => {
      requests.inc({
        version: res.locals.apiVersion ?? 'none',
        route: res.locals.route?.pattern ?? 'unmatched',
        method: req.method,
        status: String(res.statusCode),
        client: clientOf(req.headers['user-agent'], (res.locals.principal as Principal | undefined)?.userId),
      });
    });
    next();
  };
}
