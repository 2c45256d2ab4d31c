// The one rule for a call to another app that did not get an answer it can use, whatever the
// transport (HTTP, GraphQL over HTTP, gRPC):
//
// - no connection, or the connection refused or reset (before or during the answer): the callee
//   is restarting, overloaded or moving, so 503 SERVICE_UNAVAILABLE with `Retry-After`;
// - no answer within the call's deadline: 504 GATEWAY_TIMEOUT (retrying at once would spend the
//   same time again, so no Retry-After);
// - an answer that is not the protocol, or not the shape agreed: 502 BAD_GATEWAY.
//
// Answers the callee did give (a 404, a gRPC NOT_FOUND) are not transport failures: each client
// maps those itself.
import type { ServiceError } from '@grpc/grpc-js';
import { ApiError } from '@platform/errors';

/**
 * The gRPC status codes the rule reads (fixed by the gRPC spec), named here so that an app that
 * makes no gRPC call does not load grpc-js (about 12 MB resident) for its constants.
 */
const grpcStatus = { CANCELLED: 1, UNKNOWN: 2, DEADLINE_EXCEEDED: 4, RESOURCE_EXHAUSTED: 8, INTERNAL: 13, UNAVAILABLE: 14 } as const;

/**
 * Seconds a client is asked to wait after a 503 from an unreachable or busy app. One second:
 * a replica restarts, a pool frees a connection or a load balancer moves the call within about
 * that, and a client that waits longer only adds to its own latency.
 */
export const RETRY_AFTER_SECONDS = 1;

/** The `Retry-After` header every 503 of an outgoing call carries. */
export const RETRY_AFTER_HEADER = { 'Retry-After': String(RETRY_AFTER_SECONDS) } as const;

/** What went wrong on the way, as the metrics and the rule name it. */
export type TransportFailure = 'unavailable' | 'timeout' | 'malformed';

export function unavailable(target: string, cause?: unknown, message = `The ${target} service is unavailable; retry shortly.`): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', message, { headers: { ...RETRY_AFTER_HEADER }, cause });
}

export function timedOut(target: string, cause?: unknown): ApiError {
  return new ApiError('GATEWAY_TIMEOUT', `The ${target} service did not answer in time.`, { cause });
}

export function malformed(target: string, cause?: unknown): ApiError {
  return new ApiError('BAD_GATEWAY', `The ${target} service sent an answer that could not be read.`, { cause });
}

/** The ApiError for a transport failure of a call to `target`. */
export function failureError(target: string, failure: TransportFailure, cause?: unknown): ApiError {
  if (failure === 'timeout') return timedOut(target, cause);
  if (failure === 'malformed') return malformed(target, cause);
  return unavailable(target, cause);
}

/** The failure an ApiError of this rule stands for (for metrics), or undefined for any other error. */
export function failureOf(error: ApiError): TransportFailure | undefined {
  if (error.code === 'SERVICE_UNAVAILABLE') return 'unavailable';
  if (error.code === 'GATEWAY_TIMEOUT') return 'timeout';
  if (error.code === 'BAD_GATEWAY') return 'malformed';
  return undefined;
}

/**
 * An HTTP client's error (Node's http client or undici) by the rule. A deadline is the
 * `TimeoutError` of an aborted signal (AbortSignal.timeout) or `timedOut` set by the caller; an
 * answer the parser refuses is `HPE_*`/HTTPParserError; anything else on the socket (refused, reset,
 * closed, unreachable, DNS) means the callee cannot be reached.
 */
export function httpFailureKind(error: unknown, timedOut = false): TransportFailure {
  const { name, code, cause } = (error ?? {}) as { name?: string; code?: string; cause?: unknown };
  if (timedOut || name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  if (name === 'HTTPParserError' || code?.startsWith('HPE_') || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' || code === 'UND_ERR_INFO') return 'malformed';
  if (cause && cause !== error) {
    const inner = httpFailureKind(cause);
    if (inner !== 'unavailable') return inner;
  }
  return 'unavailable';
}

/** grpc-js's words for a peer that does not speak gRPC over HTTP/2, or sent a message it cannot read. */
const GRPC_UNREADABLE = /Protocol error|Parse Error|Failed to parse server response|Received message larger than max|Received RST_STREAM with code 1\b|Response message parsing error/i;

/**
 * A gRPC status by the rule, or undefined when it is the callee's own answer (NOT_FOUND,
 * FAILED_PRECONDITION, INVALID_ARGUMENT, …), which the client maps itself. grpc-js reports a
 * peer that is not gRPC as UNAVAILABLE or INTERNAL with a protocol message: that is 502.
 */
export function grpcFailureKind(error: Pick<ServiceError, 'code' | 'details'>): TransportFailure | undefined {
  const details = error.details ?? '';
  switch (error.code) {
    case grpcStatus.DEADLINE_EXCEEDED:
      return 'timeout';
    case grpcStatus.UNAVAILABLE:
    case grpcStatus.RESOURCE_EXHAUSTED:
    case grpcStatus.INTERNAL:
    case grpcStatus.UNKNOWN:
      if (GRPC_UNREADABLE.test(details)) return 'malformed';
      return error.code === grpcStatus.UNAVAILABLE || error.code === grpcStatus.RESOURCE_EXHAUSTED ? 'unavailable' : undefined;
    case grpcStatus.CANCELLED:
      // The channel shut down under the call (a stop) or the peer cancelled it: not an answer.
      return 'unavailable';
    default:
      return undefined;
  }
}

/** The ApiError for a failed gRPC call by the rule, or undefined when the status is the callee's answer. */
export function grpcFailure(target: string, error: ServiceError): ApiError | undefined {
  const kind = grpcFailureKind(error);
  return kind && failureError(target, kind, error);
}
