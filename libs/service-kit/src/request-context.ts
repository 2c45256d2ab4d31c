// Per-request facts that outgoing calls need (trace id, deadline, the caller's credential),
// carried by AsyncLocalStorage so service code does not thread them through every signature.
// When spans are exported, trace context travels in OpenTelemetry's context and its
// instrumentations write `traceparent` on every call (libs/tracing); otherwise no SDK is loaded and
// outgoing calls pass on the request's own `traceparent` (outgoingTraceparent), so every hop still
// logs the client's trace id.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import { ApiError } from '@platform/errors';
import { activeSpan, activeTraceId, tracingActive, unsampledTraceparent } from '@platform/tracing';

export interface RequestContext {
  traceId: string;
  /** The W3C `traceparent` to pass on when no tracing SDK writes one: the caller's, or one that starts this trace. */
  traceparent: string;
  /** Epoch ms by which the caller needs an answer. */
  deadline: number;
  /** The caller's `Authorization` header, forwarded on service-to-service calls. */
  authorization?: string;
  /** The answer to this request: a fault nobody caught in its work ends it (see process-faults). */
  response?: Response;
}

export const TIMEOUT_HEADER = 'x-request-timeout-ms';

const storage = new AsyncLocalStorage<RequestContext>();

/**
 * A W3C `traceparent` (Trace Context §3.2) as OpenTelemetry's propagator reads it, so a hop with
 * tracing on and one without agree on the trace: lowercase hex only, version `ff` never, ids not
 * all zeros; a later version may carry more fields after the flags, version 00 may not.
 */
const TRACEPARENT = /^(?!ff)([\da-f]{2})-(?!0{32})([\da-f]{32})-(?!0{16})([\da-f]{16})-([\da-f]{2})(-.*)?$/;

interface TraceParent {
  traceId: string;
  parentId: string;
  flags: string;
}

/** A valid `traceparent`'s parts, or undefined (the header is then ignored, and a trace starts here). */
function parseTraceparent(traceparent: string | undefined): TraceParent | undefined {
  const match = traceparent ? TRACEPARENT.exec(traceparent.trim()) : null;
  if (!match || (match[1] === '00' && match[5] !== undefined)) return undefined;
  return { traceId: match[2], parentId: match[3], flags: match[4] };
}

/** 32 random hex digits. randomUUID draws from a pooled buffer: much cheaper per request than randomBytes(16). */
const randomHex32 = () => randomUUID().replaceAll('-', '');

/** The W3C trace id of a `traceparent` header, or a new one. */
export function traceIdFrom(traceparent: string | undefined): string {
  return parseTraceparent(traceparent)?.traceId ?? randomHex32();
}

/**
 * The `traceparent` a hop that records no span passes on: the caller's (`parent`, read once) when it carries
 * `traceId` (W3C Trace Context lets a hop that does not take part forward it as it came), otherwise
 * a new one for `traceId`, not sampled (this hop recorded nothing for a child to hang under).
 */
function traceparentFor(parent: TraceParent | undefined, traceId: string): string {
  // Passed on in the version this hop speaks (a later version's extra fields are not ours to forward).
  if (parent?.traceId === traceId) return `00-${parent.traceId}-${parent.parentId}-${parent.flags}`;
  return `00-${traceId}-${randomHex32().slice(0, 16)}-00`;
}

/**
 * The `traceparent` an outgoing call of the current request carries, or undefined: outside a
 * request, or when the tracing SDK records the request (its instrumentations write the header).
 * A request the SDK does not sample is served around the instrumentations (libs/tracing
 * `sampledRequestsOnly`): its calls carry its trace, not sampled, from here.
 */
export function outgoingTraceparent(): string | undefined {
  return tracingActive() ? unsampledTraceparent() : storage.getStore()?.traceparent;
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
 * belongs to (the client's `traceparent` continued, or a new trace); without the tracing SDK, read
 * from `traceparent` the same way. Deadline from `X-Request-Timeout-Ms` (set by the gateway) or
 * the default budget.
 */
export function requestContext(defaultTimeoutMs: number): RequestHandler {
  return (req, res, next) => {
    // Read once per request: for the trace id, and for the traceparent outgoing calls pass on.
    const parent = parseTraceparent(req.headers.traceparent as string | undefined);
    const traceId = activeTraceId() ?? parent?.traceId ?? randomHex32();
    res.locals.span = activeSpan();
    const timeout = Number(req.headers[TIMEOUT_HEADER]);
    const budget = Number.isFinite(timeout) && timeout > 0 ? Math.min(timeout, defaultTimeoutMs * 6) : defaultTimeoutMs;
    res.locals.traceId = traceId;
    res.setHeader('X-Request-Id', traceId);
    storage.run({ traceId, traceparent: traceparentFor(parent, traceId), deadline: Date.now() + budget, authorization: req.headers.authorization, response: res }, next);
  };
}
