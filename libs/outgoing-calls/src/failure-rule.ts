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
const grpcStatus = { CANCELLED: 1, DEADLINE_EXCEEDED: 4, RESOURCE_EXHAUSTED: 8, INTERNAL: 13, UNAVAILABLE: 14 } as const;

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

/**
 * The key under which this app's gRPC interceptor (outgoing-calls.ts) marks, in the metadata of
 * the status it hands on, an answer whose `content-type` was not gRPC: an HTTP/2 peer that
 * answered, but not in gRPC (a web server, a proxy's error page). The interceptor removes the key
 * from whatever a peer sent, so only it sets the mark.
 */
export const NOT_GRPC_ANSWER = 'outgoing-call-not-grpc';

/** True for a `content-type` of gRPC: `application/grpc`, or with a `+proto`-like suffix or parameters. */
export function isGrpcContentType(contentType: unknown): boolean {
  return typeof contentType === 'string' && /^application\/grpc(?:[+;]|$)/i.test(contentType);
}

/**
 * Unreadable answers grpc-js reports with no field of their own, only a status code and its
 * details text, matched here and nowhere else, each whole or by the exact prefix grpc-js writes
 * (grpc-js 1.14, build/src):
 * - a peer that does not speak HTTP/2 at all: the session fails with Node's "Protocol error",
 *   which transport.js keeps as text only (`errorHandler`, `errorMessage = error.message`) and
 *   load-balancer-pick-first.js reports as UNAVAILABLE "No connection established. Last error:
 *   Protocol error (<time>)...";
 * - a gRPC peer whose message is garbage: subchannel-call.js cancels with RESOURCE_EXHAUSTED and
 *   the decoder's "Received message larger than max (...)" (stream-decoder.js), or
 *   client-interceptors.js with INTERNAL "Response message parsing error: ...";
 * - a peer that reset the stream with PROTOCOL_ERROR: INTERNAL "Received RST_STREAM with code 1"
 *   (subchannel-call.js, the stream's `close`; its `rstCode` does not reach the interceptors).
 * An HTTP/2 peer that answers but not in gRPC is recognised by its content-type instead (above).
 */
const NOT_HTTP2_PEER = /^No connection established\. Last error: Protocol error \(/;
const UNREADABLE_MESSAGE: ReadonlyArray<{ code: number; details: RegExp }> = [
  { code: grpcStatus.RESOURCE_EXHAUSTED, details: /^Received message larger than max \(/ },
  { code: grpcStatus.INTERNAL, details: /^Response message parsing error: / },
  { code: grpcStatus.INTERNAL, details: /^Received RST_STREAM with code 1$/ },
];

/**
 * A gRPC status by the rule, or undefined when it is the callee's own answer (NOT_FOUND,
 * FAILED_PRECONDITION, INVALID_ARGUMENT, …), which the client maps itself. An answer that was
 * not gRPC is 502, unless grpc-js read it as UNAVAILABLE (a proxy's 502, 503, 504 or 429: the
 * callee is away, not garbled).
 */
export function grpcFailureKind(error: Pick<ServiceError, 'code' | 'details' | 'metadata'>): TransportFailure | undefined {
  if (error.code === grpcStatus.DEADLINE_EXCEEDED) return 'timeout';
  if (error.code === grpcStatus.CANCELLED) return 'unavailable'; // the channel shut down under the call (a stop), or the peer cancelled it: not an answer
  if (error.code === grpcStatus.UNAVAILABLE) return NOT_HTTP2_PEER.test(error.details ?? '') ? 'malformed' : 'unavailable';
  if (error.metadata?.get(NOT_GRPC_ANSWER).length) return 'malformed';
  if (UNREADABLE_MESSAGE.some((unreadable) => unreadable.code === error.code && unreadable.details.test(error.details ?? ''))) return 'malformed';
  return error.code === grpcStatus.RESOURCE_EXHAUSTED ? 'unavailable' : undefined;
}

/** The ApiError for a failed gRPC call by the rule, or undefined when the status is the callee's answer. */
export function grpcFailure(target: string, error: ServiceError): ApiError | undefined {
  const kind = grpcFailureKind(error);
  return kind && failureError(target, kind, error);
}
