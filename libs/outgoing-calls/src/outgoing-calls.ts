// The one place a call from one app to another is built. Every call, whatever its transport:
// - gets its deadline from the time the current request has left (service-kit's request context,
//   less one hop margin; a fallback outside a request), sent on as `X-Request-Timeout-Ms` or as
//   the gRPC deadline; no time left is 504 before anything is sent;
// - carries the trace: the request's `traceparent` when no tracing SDK runs; with the SDK, the
//   http/undici/grpc instrumentations write this hop's span for a sampled request, and for one
//   not sampled (served around them) this hop's trace, not sampled (service-kit's outgoingTraceparent);
// - carries a credential: this app's service token, the caller's own `Authorization`, or none
//   (the proxy forwards the client's headers as they came);
// - is timed in one metric family (call-metrics.ts);
// - fails by one rule (failure-rule.ts): refused or reset 503 with the one Retry-After, timeout
//   504, an unreadable answer 502.
// HTTP and GraphQL fetches go over an undici pool per target app; gRPC clients are built here
// with one interceptor doing the same; the gateway's streaming proxy keeps Node's http client but
// takes its head (deadline, headers, timer) and its failures from here (`callHead`, the rule).
import type { ChannelOptions, Client, ChannelCredentials, Interceptor, Metadata } from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { Pool } from 'undici';
import { ApiError } from '@platform/errors';
import { currentContext, outgoingBudgetMs, outgoingTraceparent, TIMEOUT_HEADER } from '@platform/service-kit';
import { type FinishCall, startCall } from './call-metrics';
import { failureError, grpcFailureKind, httpFailureKind, isGrpcContentType, malformed, NOT_GRPC_ANSWER } from './failure-rule';

/**
 * Whose credential a call carries: `service`, this app's service token (calls the app makes on its
 * own account: inventory reservations, credential lookups, event logs); `caller`, the current
 * request's `Authorization` as it came (the callee applies the caller's own rights); `none`.
 */
export type CallCredential = 'service' | 'caller' | 'none';

export interface OutgoingCallsOptions {
  /** Where `outgoing_call_duration_seconds` is recorded (the app's metrics registry). */
  registry?: Registry;
  /** This app's service token (libs/auth `serviceTokenSource`), for calls with credential `service`. */
  serviceToken?: () => Promise<string>;
  /** The budget of a call made outside a request (background work), unless the call names its own. */
  defaultTimeoutMs?: number;
}

/** What a call sends before its body, and its timer: built once per call, for every transport. */
export interface CallHead {
  /** Milliseconds the call may take. */
  budgetMs: number;
  /** `X-Request-Timeout-Ms`, `traceparent` (when this hop writes it) and the credential. */
  headers: Record<string, string>;
  finish: FinishCall;
}

export interface HttpCall {
  /** Names the call in metrics (`products-by-ids`, `subgraph`): fixed in code, never from a request. */
  operation: string;
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path and query, below the target's base URL. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  credential: CallCredential;
  /**
   * With credential `caller`: the caller's `Authorization` when it is no longer the one the request
   * came with (the gateway forwards an API key's owner as a token of theirs).
   */
  authorization?: string;
  /** The longest this call may take, inside the request's budget; outside a request, its budget. */
  timeoutMs?: number;
  /** A deadline shared by several calls (one timer per request rather than per call); its abort is a timeout. */
  deadline?: AbortSignal;
  /** Ends the call early when the caller stops waiting (a shutdown). */
  signal?: AbortSignal;
  /** The answer must be JSON when its status is below 300 (parsed into `body`; unreadable is 502). */
  json?: boolean;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The whole answer, as text. */
  text: string;
  /** With `json`, the parsed answer of a status below 300. */
  body: unknown;
}

/** HTTP (and GraphQL over HTTP) calls to one app. */
export interface HttpTarget {
  readonly target: string;
  request(call: HttpCall): Promise<HttpAnswer>;
  close(): Promise<void>;
}

export interface OutgoingCalls {
  /** The head of one call to `target`: its budget, headers and timer. Throws 504 when no time is left. */
  callHead(target: string, operation: string, options: { credential: Exclude<CallCredential, 'service'>; authorization?: string; timeoutMs?: number }): CallHead;
  /** HTTP calls to the app `target` (`users`, `catalog`) at `baseUrl`, over a pool of keep-alive connections. */
  http(target: string, baseUrl: string, options?: { connections?: number }): HttpTarget;
  /** A generated gRPC client for the app `target` at `address` whose every call goes through this factory. */
  grpcClient<C extends Client>(ClientClass: new (address: string, creds: ChannelCredentials, options?: ChannelOptions) => C, target: string, address: string, channelOptions?: ChannelOptions): C;
}

/**
 * A signal that aborts with either of two, whose listener on the long-lived one (a stop signal
 * that outlives thousands of calls) is removed when the call ends: AbortSignal.any would keep it.
 */
function endedBy(deadline: AbortSignal, stop: AbortSignal): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const abort = () => controller.abort(deadline.aborted ? deadline.reason : stop.reason);
  if (deadline.aborted || stop.aborted) abort();
  deadline.addEventListener('abort', abort, { once: true });
  stop.addEventListener('abort', abort, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      deadline.removeEventListener('abort', abort);
      stop.removeEventListener('abort', abort);
    },
  };
}

/** The answer's outcome label: `ok` below 400, else its status. */
const httpOutcome = (status: number) => (status < 400 ? 'ok' : String(status));

export function createOutgoingCalls(options: OutgoingCallsOptions = {}): OutgoingCalls {
  const { registry, serviceToken } = options;
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 5_000;

  /** The call's budget: what the request has left (less the hop margin), within the call's own bound. */
  const budgetOf = (target: string, timeoutMs: number | undefined) => Math.min(outgoingBudgetMs(timeoutMs ?? defaultTimeoutMs, `the ${target} service`), timeoutMs ?? Infinity);

  /** A call's budget and headers, without its timer (the gRPC interceptor times the call itself, by method). */
  function budgetAndHeaders(target: string, head: { credential: CallCredential; authorization?: string; timeoutMs?: number }): Omit<CallHead, 'finish'> {
    const budgetMs = budgetOf(target, head.timeoutMs);
    const headers: Record<string, string> = { [TIMEOUT_HEADER]: String(budgetMs) };
    const traceparent = outgoingTraceparent();
    if (traceparent) headers.traceparent = traceparent;
    if (head.credential === 'caller') {
      const authorization = head.authorization ?? currentContext()?.authorization;
      if (authorization) headers.authorization = authorization;
    }
    return { budgetMs, headers };
  }

  function callHead(target: string, operation: string, head: { credential: CallCredential; authorization?: string; timeoutMs?: number }): CallHead {
    return { ...budgetAndHeaders(target, head), finish: startCall(registry, target, operation) };
  }

  async function serviceAuthorization(): Promise<string> {
    if (!serviceToken) throw new Error('a call with the service credential needs OutgoingCallsOptions.serviceToken');
    return `Bearer ${await serviceToken()}`;
  }

  function http(target: string, baseUrl: string, poolOptions: { connections?: number } = {}): HttpTarget {
    const url = new URL(baseUrl);
    const base = url.pathname.replace(/\/$/, '');
    const pool = new Pool(url.origin, { connections: poolOptions.connections ?? 256, pipelining: 1 });
    return {
      target,
      async request(call) {
        const head = callHead(target, call.operation, call);
        const headers = { ...call.headers, ...head.headers };
        if (call.credential === 'service') headers.authorization = await serviceAuthorization();
        const deadline = call.deadline ?? AbortSignal.timeout(head.budgetMs);
        const ended = call.signal ? endedBy(deadline, call.signal) : { signal: deadline, release: () => undefined };
        let answer: HttpAnswer;
        try {
          const response = await pool.request({ path: `${base}${call.path}` || '/', method: call.method ?? 'GET', headers, body: call.body, signal: ended.signal });
          answer = { status: response.statusCode, headers: response.headers, text: await response.body.text(), body: undefined };
        } catch (error) {
          const kind = httpFailureKind(error, deadline.aborted);
          head.finish(kind);
          throw failureError(target, kind, error);
        } finally {
          ended.release();
        }
        if (call.json && answer.status < 300) {
          try {
            answer.body = JSON.parse(answer.text);
          } catch (error) {
            head.finish('malformed');
            throw malformed(target, error);
          }
        }
        head.finish(httpOutcome(answer.status));
        return answer;
      },
      close: () => pool.close(),
    };
  }

  function grpcClient<C extends Client>(ClientClass: new (address: string, creds: ChannelCredentials, options?: ChannelOptions) => C, target: string, address: string, channelOptions: ChannelOptions = {}): C {
    // Loaded by the apps that call over gRPC only (orders): the others never pay for grpc-js.
    const { credentials, InterceptingCall, status: grpcStatus } = require('@grpc/grpc-js') as typeof import('@grpc/grpc-js');
    const interceptor: Interceptor = (callOptions, nextCall) => {
      const path = callOptions.method_definition.path;
      const finish = startCall(registry, target, path.slice(path.lastIndexOf('/') + 1));
      // No time left: a deadline already past, so the call ends DEADLINE_EXCEEDED (504) without being sent.
      let head: Omit<CallHead, 'finish'> | undefined;
      try {
        head = budgetAndHeaders(target, { credential: 'none' });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
      }
      const deadline = Date.now() + (head?.budgetMs ?? 0);
      const asked = callOptions.deadline === undefined ? deadline : Math.min(deadline, Number(new Date(callOptions.deadline)));
      return new InterceptingCall(nextCall({ ...callOptions, deadline: asked }), {
        start(metadata: Metadata, _listener, next) {
          if (head?.headers.traceparent) metadata.set('traceparent', head.headers.traceparent);
          // Whether the peer answered in gRPC, by the content-type of its response headers (or,
          // for an answer of headers alone, of the status's): the failure rule reads the mark.
          let notGrpc = false;
          const send = () =>
            next(metadata, {
              onReceiveMetadata(headers, nextMetadata) {
                notGrpc = !isGrpcContentType(headers.get('content-type')[0]);
                nextMetadata(headers);
              },
              onReceiveStatus(outcome, nextStatus) {
                const contentType = outcome.metadata.get('content-type')[0];
                outcome.metadata.remove(NOT_GRPC_ANSWER);
                if (outcome.code !== grpcStatus.OK && (notGrpc || (contentType !== undefined && !isGrpcContentType(contentType)))) outcome.metadata.set(NOT_GRPC_ANSWER, 'true');
                finish(outcome.code === grpcStatus.OK ? 'ok' : (grpcFailureKind(outcome) ?? grpcStatus[outcome.code]));
                nextStatus(outcome);
              },
            });
          if (!serviceToken) return send();
          // Sent once the token is at hand: grpc-js holds the call's messages until then.
          serviceAuthorization().then(
            (authorization) => {
              metadata.set('authorization', authorization);
              send();
            },
            () => send(), // no token: the callee refuses the call (UNAUTHENTICATED), as it would any unsigned one
          );
        },
      });
    };
    return new ClientClass(address, credentials.createInsecure(), { ...channelOptions, interceptors: [...((channelOptions.interceptors as Interceptor[] | undefined) ?? []), interceptor] });
  }

  return { callHead, http, grpcClient };
}
