// Per-request facts that outgoing calls need (trace id, deadline, the caller's credential),
// carried by AsyncLocalStorage so service code does not thread them through every signature.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';

export interface RequestContext {
  traceId: string;
  /** Epoch ms by which the caller needs an answer. */
  deadline: number;
  /** The caller's `Authorization` header, forwarded on service-to-service calls. */
  authorization?: string;
  /** The answer to this request: a fault nobody caught in its work ends it (see process-faults). */
  response?: Response;
}

export const TIMEOUT_HEADER = 'x-request-timeout-ms';

const storage = new AsyncLocalStorage<RequestContext>();

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}$/;

/** The W3C trace id of a `traceparent` header, or a new one. */
export function traceIdFrom(traceparent: string | undefined): string {
  const match = traceparent ? TRACEPARENT.exec(traceparent.trim().toLowerCase()) : null;
  // randomUUID draws from a pooled buffer: much cheaper per request than randomBytes(16).
  return match && !/^0+$/.test(match[1]) ? match[1] : randomUUID().replaceAll('-', '');
}

export function traceparentOf(traceId: string): string {
  return `00-${traceId}-${randomUUID().replaceAll('-', '').slice(0, 16)}-01`;
}

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

/** Milliseconds left before the current request's deadline (`fallback` outside a request). */
export function remainingMs(fallback = 5_000): number {
  const context = storage.getStore();
  return context ? Math.max(0, context.deadline - Date.now()) : fallback;
}

/**
 * First middleware: trace id from `traceparent` (or new), echoed as `X-Request-Id`; deadline
 * from `X-Request-Timeout-Ms` (set by the gateway) or the default budget.
 */
export function requestContext(defaultTimeoutMs: number): RequestHandler {
  return (req, res, next) => {
    const traceId = traceIdFrom(req.headers.traceparent as string | undefined);
    const timeout = Number(req.headers[TIMEOUT_HEADER]);
    const budget = Number.isFinite(timeout) && timeout > 0 ? Math.min(timeout, defaultTimeoutMs * 6) : defaultTimeoutMs;
    res.locals.traceId = traceId;
    res.setHeader('X-Request-Id', traceId);
    storage.run({ traceId, deadline: Date.now() + budget, authorization: req.headers.authorization, response: res }, next);
  };
}
