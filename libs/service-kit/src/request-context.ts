// Per-request facts that outgoing calls need (trace id, deadline, the caller's credential),
// carried by AsyncLocalStorage so service code does not thread them through every signature.
// Trace context itself travels in OpenTelemetry's context (libs/tracing), not here.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { ApiError } from '@platform/errors';
import { activeSpan, activeTraceId } from '@platform/tracing';

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

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

/** Milliseconds left before the current request's deadline (`fallback` outside a request). */
export function remainingMs(fallback = 5_000): number {
  const context = storage.getStore();
  return context ? Math.max(0, context.deadline - Date.now()) : fallback;
}

/** Kept back from the caller's time on every outgoing call, to answer the caller after the callee fails. */
const HOP_MARGIN_MS = 50;

/**
 * The time an outgoing call may take (its `X-Request-Timeout-Ms`, its gRPC deadline): what is
 * left of the current request's budget (`fallbackMs` outside a request) less one margin, the same
 * for every client. No time left is 504 GATEWAY_TIMEOUT before the call is made.
 */
export function outgoingBudgetMs(fallbackMs: number, callee: string): number {
  const budget = remainingMs(fallbackMs) - HOP_MARGIN_MS;
  if (budget <= 0) throw new ApiError('GATEWAY_TIMEOUT', `No time was left to call ${callee}.`);
  return budget;
}

/**
 * First middleware: the trace id, echoed as `X-Request-Id`: the trace OpenTelemetry's server span
 * belongs to (the client's `traceparent` continued, or a new trace); without tracing (tests), read
 * from `traceparent` the same way. Deadline from `X-Request-Timeout-Ms` (set by the gateway) or
 * the default budget.
 */
export function requestContext(defaultTimeoutMs: number): RequestHandler {
  return (req, res, next) => {
    const traceId = activeTraceId() ?? traceIdFrom(req.headers.traceparent as string | undefined);
    res.locals.span = activeSpan();
    const timeout = Number(req.headers[TIMEOUT_HEADER]);
    const budget = Number.isFinite(timeout) && timeout > 0 ? Math.min(timeout, defaultTimeoutMs * 6) : defaultTimeoutMs;
    res.locals.traceId = traceId;
    res.setHeader('X-Request-Id', traceId);
    storage.run({ traceId, deadline: Date.now() + budget, authorization: req.headers.authorization, response: res }, next);
  };
}
