// Forwards a request to its service, on Node's own HTTP client over a bounded pool of keep-alive
// connections: at the path the service serves (the version prefix stripped for a v1 route, pipeline.ts routeRequest),
// every failure turned into the error format. Bodies stream through untouched; 4xx answers pass
// through as the service wrote them, 5xx answers are never passed through raw.
//
// The proxy keeps its own streaming client, but each forwarded request is an outgoing call like
// any other (libs/outgoing-calls): its head (the remaining time budget as X-Request-Timeout-Ms, the
// trace, its timer in outgoing_call_duration_seconds) comes from the factory's `callHead`, and a
// failure before the answer by the one rule: refused or reset 503 with the one Retry-After, no
// answer in time 504, an answer that is not HTTP 502.
//
// The gateway frames what it forwards itself: every body was read whole before (pipeline.ts
// receiveBody) and goes on with its exact length, and a request without a body goes on without
// one. A request takes a connection, or a place in the wait for one, only once it has fully
// arrived, and the connections are shared fairly between callers (fair-share.ts). Every header is
// fixed when the request is created, so nothing is set after it is sent. A connection whose
// answer the client left mid-way is destroyed, never given to the next request.
import { Agent, ClientRequest, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { ApiError, errorCatalog, type ErrorCode, sendError } from '@platform/errors';
import { type CallHead, failureError, failureOf, httpFailureKind, malformed, type OutgoingCalls, RETRY_AFTER_SECONDS, timedOut, unavailable } from '@platform/outgoing-calls';
import { TIMEOUT_HEADER } from '@platform/service-kit';
import { unsampledTraceparent } from '@platform/tracing';
import type { AnswerRewrite } from '../deprecations/rest-deprecations';
import { FairShare } from './fair-share';

/** Request headers about this hop, not the request, and those the gateway sets itself. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'transfer-encoding',
  'content-length',
  'te',
  'trailer',
  'upgrade',
  'http2-settings',
  // Node answered `100-continue` already when the gateway started reading the body.
  'expect',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-prefix',
  TIMEOUT_HEADER,
]);
const RESPONSE_HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer']);
const MAX_ERROR_BODY = 64 * 1024;

export interface UpstreamOptions {
  /** The service's name in metrics and errors (`users`). */
  service: string;
  /** The gateway's outgoing-call factory. */
  calls: OutgoingCalls;
  /** Connections to the service; past them requests wait for one, in turn by caller. */
  maxSockets: number;
  /** Requests that may wait for a connection; past them, 503 at once for the caller with the most waiting. */
  maxQueued: number;
}

/** What the gateway answers for an upstream 5xx: its own code when it is one of ours (with the service's Retry-After, else the one policy), else 502. */
function upstreamFailure(status: number, body: string, retryAfter = String(RETRY_AFTER_SECONDS)): ApiError {
  let code: string | undefined;
  let message: string | undefined;
  try {
    ({ code, message } = JSON.parse(body) as { code?: string; message?: string });
  } catch {
    // not our format: treated as a bad response below
  }
  const known = code && code in errorCatalog && errorCatalog[code as ErrorCode].status === status ? (code as ErrorCode) : undefined;
  if (known === 'SERVICE_UNAVAILABLE' || known === 'GATEWAY_TIMEOUT') {
    return new ApiError(known, message ?? errorCatalog[known].title, { headers: { 'Retry-After': retryAfter } });
  }
  if (status === 503) return new ApiError('SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', { headers: { 'Retry-After': retryAfter } });
  if (status === 504) return new ApiError('GATEWAY_TIMEOUT', 'The service did not answer in time.');
  return new ApiError('BAD_GATEWAY', 'The service behind this endpoint failed; quote the traceId when reporting it.');
}

/**
 * Where the service gets a request: a v1 route at its path without the version prefix (the prefix
 * passed on in X-Forwarded-Prefix, for the `instance` of its errors), also when a later version
 * serves it unchanged; a route declared for a later version at its path with that version's
 * prefix (`/v2/products/1`), where the service mounts the new handler beside the old one. Read
 * when the request is sent: `fields` was taken out of the URL since it was routed.
 */
function upstreamTargetOf(req: Request, res: Response): { path: string; prefix?: string } {
  const route = res.locals.route;
  if (!route || res.locals.apiVersion === undefined) return { path: req.originalUrl };
  const after = req.originalUrl.slice(route.servedAs.length + 1);
  const rest = after.startsWith('/') ? after : `/${after}`;
  if (route.version === 'v1') return { path: rest, prefix: `/${route.servedAs}` };
  return { path: `/${route.version}${rest}` };
}

/** The client's headers as the service gets them: this hop's own dropped, the gateway's added. */
function forwardedHeaders(req: Request, prefix: string | undefined, head: CallHead): OutgoingHttpHeaders {
  const incoming = req.headers;
  const headers: OutgoingHttpHeaders = {};
  for (const name in incoming) if (!NOT_FORWARDED.has(name)) headers[name] = incoming[name];
  // Headers the client names in Connection are this hop's too (RFC 9110 §7.6.1).
  const connection = incoming.connection;
  if (connection !== undefined && connection !== 'keep-alive' && connection !== 'close') {
    for (const token of connection.split(',')) delete headers[token.trim().toLowerCase()];
  }
  // Client-sent X-Forwarded-* are still here only when a trusted proxy sent them (dropInternalHeaders).
  const peer = req.socket.remoteAddress ?? '';
  const chain = incoming['x-forwarded-for'];
  headers['x-forwarded-for'] = chain ? `${chain}, ${peer}` : peer;
  headers['x-forwarded-proto'] = incoming['x-forwarded-proto'] ?? 'http';
  // HTTP/1.0 may name no Host: then there is none to pass on (an undefined header value would throw).
  const host = incoming['x-forwarded-host'] ?? incoming.host;
  if (host !== undefined) headers['x-forwarded-host'] = host;
  if (prefix) headers['x-forwarded-prefix'] = prefix;
  // The call's head: X-Request-Timeout-Ms, and the trace (with the tracing SDK its HTTP instrumentation writes this hop's span instead).
  Object.assign(headers, head.headers);
  return headers;
}

/** The service's headers as the client gets them; a Cache-Control the gateway set for the route wins. */
function answerHeaders(proxyRes: IncomingMessage, res: Response): Record<string, string | string[]> {
  const gatewayCaching = res.hasHeader('cache-control');
  const headers: Record<string, string | string[]> = {};
  for (const name in proxyRes.headers) {
    const value = proxyRes.headers[name];
    if (value === undefined || RESPONSE_HOP_BY_HOP.has(name) || (gatewayCaching && name === 'cache-control')) continue;
    // The gateway's own Vary (Origin, Accept-Encoding) stays: writeHead would replace it otherwise.
    if (name === 'vary' && res.hasHeader('vary')) res.vary(String(value));
    else headers[name] = value;
  }
  return headers;
}

/** Sends what the compression middleware holds so far (it adds `flush` to the response when it runs). */
function flushCompressed(res: Response): void {
  (res as Response & { flush?: () => void }).flush?.();
}

export function createUpstreamProxy(target: string, options: UpstreamOptions): RequestHandler {
  const { hostname, port } = new URL(target);
  const { service, calls } = options;
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets, keepAliveMsecs: 1_000 });
  const share = new FairShare(options.maxSockets, options.maxQueued);

  return (req, res) => {
    // The client's own Authorization goes on among its headers: no credential is added.
    const head = calls.callHead(service, 'proxy', { credential: 'none' });
    const target = upstreamTargetOf(req, res);
    const headers = forwardedHeaders(req, target.prefix, head);
    // The body arrived whole before (receiveBody, or the token route's rate limit): it goes on
    // with its exact length; a request without one goes on without one.
    const body = res.locals.forwardBody;
    if (body) headers['content-length'] = body.length;

    let proxyReq: ClientRequest | undefined;
    let settled = false;
    let clientGone = false;

    /** Answers the client with `error` instead of the service; the connection to the service is destroyed. */
    const refuse = (error: ApiError, outcome: string = failureOf(error) ?? 'error') => {
      if (settled) return;
      settled = true;
      head.finish(outcome);
      proxyReq?.destroy();
      if (clientGone) return;
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendError(req, res, error);
    };

    const send = () => {
      if (settled || clientGone) return;
      // The budget the service is given is what is left once a connection is free: time spent
      // waiting for one (FairShare) is gone from the gateway's timer, and a service told the
      // whole budget would work on past it, for an answer nobody waits for.
      const waitedMs = Date.now() - enteredAt;
      if (waitedMs > 0) headers[TIMEOUT_HEADER] = String(Math.max(1, head.budgetMs - waitedMs));
      // `pathname` is not Node's: the HTTP instrumentation reads it on a recorded call. Without it,
      // it parses the path against an origin it writes without the port's colon, which throws, and
      // an exception per recorded call costs about as much as the rest of its span.
      // A HEAD on a route whose answers are rewritten (rest-deprecations.ts) is asked of the service
      // as its GET: the answer's headers depend on its body, and Node writes none for a HEAD.
      const method = req.method === 'HEAD' && res.locals.rewriteAnswer ? 'GET' : req.method;
      const options = { hostname, port, method, path: target.path, pathname: target.path.split('?')[0], headers, agent, insecureHTTPParser: false };
      // A request the tracing sampler left out (libs/tracing's sampledRequestsOnly): its call goes
      // around the HTTP instrumentation, which would only record nothing at some cost, carrying
      // this hop's trace itself. A recorded one goes through it, which writes this hop's span.
      const traceparent = unsampledTraceparent();
      const sent = traceparent ? new ClientRequest({ ...options, headers: { ...headers, traceparent } }) : httpRequest(options);
      proxyReq = sent;

      // Before the answer begins, a failure of the exchange is the client's answer; after, the
      // answer's own stream reports a cut (below), and a late write error changes nothing.
      let answered = false;
      sent.on('error', (error: NodeJS.ErrnoException) => {
        if (!answered) refuse(failureError(service, httpFailureKind(error), error));
      });

      sent.on('response', (proxyRes: IncomingMessage) => {
        answered = true;
        clearTimeout(timer);
        // Cut mid-answer: the client sees the cut, never a second answer; before its head was written, the rule's 503 (a reset).
        proxyRes.on('error', (error) => (res.headersSent ? res.destroy() : refuse(failureError(service, httpFailureKind(error), error))));
        if (settled) {
          proxyRes.destroy();
          return;
        }
        const status = proxyRes.statusCode ?? 0;
        if (status < 200 || status > 599) {
          refuse(malformed(service));
          return;
        }
        head.finish(status < 400 ? 'ok' : String(status));
        // A route with deprecated response fields (deprecations/rest-deprecations.ts): its JSON
        // success is read whole, so the fields can be named in Deprecated-Fields, or left out in
        // a brownout, before the head is written. Every other answer streams through untouched.
        const rewrite = res.locals.rewriteAnswer as AnswerRewrite | undefined;
        if (rewrite && status < 300 && proxyRes.headers['content-encoding'] === undefined && /json/.test(proxyRes.headers['content-type'] ?? '')) {
          const chunks: Buffer[] = [];
          proxyRes.on('data', (chunk: Buffer) => chunks.push(chunk));
          proxyRes.on('end', () => {
            if (settled || clientGone || res.headersSent) return;
            const body = rewrite(status, Buffer.concat(chunks));
            const headers = answerHeaders(proxyRes, res);
            delete headers['content-length'];
            res.writeHead(status, { ...headers, 'content-length': String(body.length) }).end(body);
          });
          return;
        }
        if (status < 500) {
          res.writeHead(status, answerHeaders(proxyRes, res)); // merged with the headers the gateway already set
          proxyRes.pipe(res);
          // An answer of unknown length may be a stream: compression must not hold its parts back.
          if (proxyRes.headers['content-length'] === undefined) proxyRes.on('data', () => flushCompressed(res));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        proxyRes.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_ERROR_BODY) chunks.push(chunk);
        });
        proxyRes.on('end', () => {
          if (settled || clientGone || res.headersSent) return;
          settled = true;
          sendError(req, res, upstreamFailure(status, Buffer.concat(chunks).toString('utf8'), proxyRes.headers['retry-after'] as string | undefined));
        });
      });

      sent.end(body);
    };

    // The request's budget covers its wait for a connection and the service's answer starting.
    const enteredAt = Date.now();
    const timer = setTimeout(() => refuse(timedOut(service)), head.budgetMs);
    const busy = () => unavailable(service, undefined, `The ${service} service is at capacity; retry shortly.`);
    // Placed by caller: a caller with many requests waiting is refused before one with few.
    const place = share.enter(res.locals.caller ?? `ip:${req.ip}`, send, () => refuse(busy(), 'busy'));
    if (!place) {
      clearTimeout(timer);
      head.finish('busy'); // never sent: no connection free and no room to wait for one
      throw busy();
    }

    res.once('close', () => {
      clientGone = !res.writableFinished;
      clearTimeout(timer);
      if (clientGone) head.finish('cancelled'); // nothing if the call had ended already
      place.leave();
      // The client left mid-answer: never reuse that connection.
      if (clientGone) proxyReq?.destroy();
    });
  };
}
