import { createServer, IncomingMessage, type RequestListener, type Server, type ServerOptions, ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError, type ErrorCode, MAX_BODY_BYTES, toErrorBody } from '@platform/errors';
import { sampledRequestsOnly } from '@platform/tracing';
import { traceIdFrom } from './request-context';

export interface Listening {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** What an express application exposes: the prototypes it gives every request and response. */
interface PrototypeSwappingApp {
  request: object;
  response: object;
}

function isExpressApp(handler: RequestListener): handler is RequestListener & PrototypeSwappingApp {
  const candidate = handler as Partial<PrototypeSwappingApp>;
  return typeof candidate.request === 'object' && typeof candidate.response === 'object';
}

/**
 * Express re-parents every request and response (`Object.setPrototypeOf`) onto its own
 * prototypes. Changing an object's prototype after Node's HTTP code has handled it sends V8 down
 * slow paths for the rest of the exchange: about 140 µs of CPU per request here, more than the
 * whole proxy hop costs. Node lets a server construct its requests and responses from given
 * classes, so they are born with the app's prototypes; express's `setPrototypeOf` then finds the
 * prototype already in place and changes nothing. Measured in docs/benchmarks.md.
 */
function bornWithPrototypesOf(app: PrototypeSwappingApp): Pick<ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  // Node's constructors are plain functions (20, 22 and 24): ours call them on an object whose
  // prototype is the app's own. Were they ever classes, `.call` would throw: keep Node's then.
  if ([IncomingMessage, ServerResponse].some((constructor) => Function.prototype.toString.call(constructor).startsWith('class'))) return {};
  function AppRequest(this: IncomingMessage, socket: ConstructorParameters<typeof IncomingMessage>[0]) {
    IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, request: IncomingMessage, options?: unknown) {
    (ServerResponse as unknown as (this: ServerResponse, request: IncomingMessage, options?: unknown) => void).call(this, request, options);
  }
  AppResponse.prototype = app.response;
  return { IncomingMessage: AppRequest as unknown as typeof IncomingMessage, ServerResponse: AppResponse as unknown as typeof ServerResponse };
}

/**
 * Connections a listener holds at once. Each costs a socket and memory, and up to the parser's
 * bound (64 KiB) of request head for up to the headers timeout, whatever the client then sends:
 * a public listener bounds them before any HTTP is read.
 */
export interface ConnectionLimits {
  /** Connections open at once, every peer together; past it a new one is answered 503 SERVICE_UNAVAILABLE. */
  max: number;
  /** Connections one peer address holds at once; past it a new one is answered 429 RATE_LIMITED. Unset: none per address. */
  maxPerAddress?: number;
  /**
   * The client a peer address stands for, under which `maxPerAddress` counts it (the gateway's:
   * an IPv6 address by its /64, which one subscriber holds whole). Unset: the address as read.
   */
  clientOf?: (address: string) => string;
  /** A peer many clients come through (a proxy the app trusts, the ingress): held to `max` only, not to `maxPerAddress`. */
  isProxy?: (address: string) => boolean;
  /** Told of each connection refused, and which limit refused it: `address` or `total`. */
  onRefused?: (limit: 'address' | 'total') => void;
}

export interface ListenOptions {
  /**
   * Longest time to receive a whole request, headers and body (default 60 s). A slower one is
   * answered 408 and its connection closed: a client trickling a body cannot hold a connection,
   * or what the app opened for that request, for longer.
   */
  requestTimeoutMs?: number;
  /** Unset: as many connections as the process takes (the services, reached only through the gateway's bounded pools). */
  connections?: ConnectionLimits;
}

/**
 * The longest request target (path and query) read, in bytes: what fitted before, when Node's
 * 16 KiB bound held the request line and the headers together. A longer one is 414 URI_TOO_LONG.
 */
export const MAX_REQUEST_TARGET_BYTES = 16 * 1024;
/** The most header bytes read (each field as `name: value` and its line end): more is 431. */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * The most header fields read: more is 431. Node's own count bound (`maxHeadersCount`) does not
 * refuse: it drops the fields past it without a word, so an `Authorization` or `X-Api-Key` sent
 * as the 1,001st field vanished and the request was answered as if it had none. Node's bound is
 * lifted (the parser's 64 KiB bound on the head still holds the memory) and this one refuses.
 */
export const MAX_HEADER_FIELDS = 1000;
/**
 * Node's parser's own bound on the request line and headers together (maxHeaderSize), above the
 * two bounds it holds: Node counts them as one, so at its default (16 KiB) a long URL overflowed
 * as "headers too large", and its refusal (HPE_HEADER_OVERFLOW) cannot tell which part did. Up to
 * this bound the two are told apart (requestTargetError); a request past it is answered 431 by
 * the parser, whichever part is long.
 */
const PARSER_MAX_HEAD_BYTES = 64 * 1024;

const headersTooLarge = { code: 'REQUEST_HEADERS_TOO_LARGE', message: 'The request headers are larger than this server reads.' } as const;

/** What a request the HTTP parser refused is answered with; anything else is 400. */
const PARSER_REFUSALS: Partial<Record<string, { code: ErrorCode; message: string }>> = {
  HPE_HEADER_OVERFLOW: headersTooLarge,
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'REQUEST_TIMEOUT', message: 'The request did not arrive in time.' },
};

/** `error` as the one error format's body, and the headers every refusal made outside the app carries. */
function refusalOf(error: ApiError, traceparent: string | undefined): { body: string; headers: Record<string, string | number> } {
  const traceId = traceIdFrom(traceparent);
  const body = JSON.stringify(toErrorBody(error, traceId));
  return {
    body,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'X-Content-Type-Options': 'nosniff', 'Cache-Control': 'no-store', 'X-Request-Id': traceId, Connection: 'close' },
  };
}

/** Answers a request the app never sees (no Host, a body announced too large) in the error format, and closes its connection. */
function refuseRequest(req: IncomingMessage, res: ServerResponse, error: ApiError): void {
  const { body, headers } = refusalOf(error, req.headers.traceparent as string | undefined);
  res.shouldKeepAlive = false;
  res.writeHead(error.status, headers).end(body);
}

/** An absolute-form request target (RFC 9112 §3.2.2): `http(s)://<authority><path>?<query>`. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#@]+)([/?][^#]*)?$/i;

/**
 * What RFC 9112 §3.2 asks of the request line and Host before any app reads them, or the refusal:
 * an HTTP/1.x version; a target of at most MAX_REQUEST_TARGET_BYTES (414) and headers of at most
 * MAX_HEADER_BYTES (431); an HTTP/1.1 request names exactly one Host (HTTP/1.0 may name none; two could be read as two
 * different hosts by two hops), and a server must accept the absolute-form (`GET
 * http://host/v1/users/me`), whose host replaces Host. Apps route by `req.url` and the gateway
 * forwards a slice of it, so an absolute-form target becomes the origin-form it names
 * (`/v1/users/me`): the path routed, checked and forwarded is then the one the client named. Its
 * bytes are kept as sent (no dot segments resolved), as for any other path. Another scheme, or
 * credentials in the authority, is refused.
 */
function requestTargetError(req: IncomingMessage): ApiError | undefined {
  // Node's parser takes `HTTP/2.0` and `HTTP/0.9` request lines (it refuses 1.2 and 3.0 with an
  // empty 400) and would answer them as HTTP/1.1: a hop that reads the version differently could
  // frame the bytes differently. Only HTTP/1.x is served here; HTTP/2 comes over its own preface.
  if (req.httpVersionMajor !== 1) return new ApiError('MALFORMED_REQUEST', `The request line names HTTP/${req.httpVersion}; this server speaks HTTP/1.1.`);
  // The URL first: a long one is what a client can shorten (fewer ids in a query, a POST search).
  if ((req.url ?? '').length > MAX_REQUEST_TARGET_BYTES) return new ApiError('URI_TOO_LONG', `The request target (path and query) is longer than ${MAX_REQUEST_TARGET_BYTES} bytes.`);
  // The header fields' bytes as sent (`name: value` and CRLF each), and the Host lines among them.
  // Node reads header bytes as latin1, one character a byte, so a string's length is its bytes.
  let headerBytes = 0;
  let hostLines = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i];
    headerBytes += name.length + req.rawHeaders[i + 1].length + 4;
    if (name.length === 4 && name.toLowerCase() === 'host') hostLines += 1;
  }
  if (headerBytes > MAX_HEADER_BYTES || req.rawHeaders.length / 2 > MAX_HEADER_FIELDS) return new ApiError(headersTooLarge.code, headersTooLarge.message);
  if (hostLines > 1) return new ApiError('MALFORMED_REQUEST', 'A request must carry one Host header, not several.');
  if (hostLines === 0 && req.httpVersion !== '1.0') return new ApiError('MALFORMED_REQUEST', 'An HTTP/1.1 request must carry a Host header.');
  const url = req.url ?? '/';
  if (url.startsWith('/') || url === '*') return undefined;
  const absolute = ABSOLUTE_FORM.exec(url);
  if (!absolute) return new ApiError('MALFORMED_REQUEST', 'The request target must be a path, or an absolute http(s) URL without credentials.');
  const [, authority, rest = '/'] = absolute;
  req.url = rest.startsWith('/') ? rest : `/${rest}`;
  req.headers.host = authority;
  return undefined;
}

/**
 * A request Node's parser refused (ambiguous or broken framing, too-large headers, a request not
 * received in time) never reaches the app, so it is answered here, on the raw socket, in the one
 * error format, and the connection is closed: after a framing error nothing further on it can be
 * trusted to start where a request starts. Bytes refused behind a request still being answered
 * (pipelined) are answered after that answer, never in its place.
 */
function answerParserRefusal(error: Error & { code?: string; reason?: string }, socket: Duplex): void {
  const answering = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  if (answering) {
    // The refused bytes are the request being answered (its body, or its time ran out): the
    // refusal is its answer, unless that has begun. Otherwise they come after it (pipelined):
    // refused once its answer is out.
    const refusesCurrent = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || !answering.req.complete;
    if (refusesCurrent && answering.headersSent) return void socket.destroy();
    if (!refusesCurrent && !answering.writableFinished) {
      answering.once('finish', () => answerParserRefusal(error, socket));
      answering.once('close', () => answering.writableFinished || socket.destroy());
      return;
    }
  }
  const refusal = PARSER_REFUSALS[error.code ?? ''] ?? { code: 'MALFORMED_REQUEST', message: `The request is not valid HTTP/1.1${error.reason ? ` (${error.reason})` : ''}.` };
  refuseOnSocket(socket, new ApiError(refusal.code, refusal.message), undefined);
}

/** Writes `error` (its own headers too) in the error format on a socket Node handed over raw, then closes it. */
function refuseOnSocket(socket: Duplex, error: ApiError, traceparent: string | undefined): void {
  const { body, headers } = refusalOf(error, traceparent);
  const head = Object.entries({ ...error.headers, ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n${head}\r\n${body}`, () => socket.destroy());
}

/**
 * Holds `server` to `limits`. A connection over a limit never reaches Node's HTTP code (no parser,
 * nothing buffered): it is answered on the raw socket in the error format, with Retry-After and
 * `Connection: close`, and closed; the answer is a few hundred bytes, as cheap as the accept that
 * preceded it, and tells a client or its operator why, where a reset would not. Node's own
 * `server.maxConnections` can only drop the socket, and knows no peers.
 */
function limitConnections(server: Server, limits: ConnectionLimits): void {
  // Node's HTTP server reads a socket from its 'connection' listener: it runs only for a
  // connection admitted here.
  const serveConnection = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  let open = 0;
  const openByAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return void socket.destroy(); // gone before it was accepted
    const perAddress = limits.maxPerAddress !== undefined && !limits.isProxy?.(address);
    const client = limits.clientOf?.(address) ?? address;
    const held = openByAddress.get(client) ?? 0;
    const refusedBy = perAddress && held >= limits.maxPerAddress! ? 'address' : open >= limits.max ? 'total' : undefined;
    if (refusedBy) {
      limits.onRefused?.(refusedBy);
      socket.on('error', () => socket.destroy());
      const error =
        refusedBy === 'address'
          ? new ApiError('RATE_LIMITED', `At most ${limits.maxPerAddress} connections from one address at once; retry when one has closed.`, { headers: { 'Retry-After': '1' } })
          : new ApiError('SERVICE_UNAVAILABLE', 'The server holds as many connections as it takes; retry shortly.', { headers: { 'Retry-After': '1' } });
      return refuseOnSocket(socket, error, undefined);
    }
    open += 1;
    if (perAddress) openByAddress.set(client, held + 1);
    socket.once('close', () => {
      open -= 1;
      if (!perAddress) return;
      const left = openByAddress.get(client)! - 1;
      if (left > 0) openByAddress.set(client, left);
      else openByAddress.delete(client);
    });
    for (const listener of serveConnection) listener.call(server, socket);
  });
}

/**
 * A CONNECT request asks for a tunnel, which no app here opens. Node hands it to a `connect`
 * listener and, without one, drops the connection with no answer at all; it is answered 405 in
 * the error format instead. Its `Allow` is empty: the target names a host, not one of our
 * resources, so no method applies to it (RFC 9110 §10.2.1).
 */
function refuseTunnel(req: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy());
  const error = new ApiError('METHOD_NOT_ALLOWED', 'CONNECT is not supported here: this server opens no tunnels.', { headers: { Allow: '' } });
  refuseOnSocket(socket, error, req.headers.traceparent as string | undefined);
}

/**
 * Listens on `port` (0: any free port). Keep-alive outlives typical load balancer idle timeouts.
 * Every app gets the same HTTP hygiene here: Node's strict parser (never the lenient one, whatever
 * the process flags say), a bound on the time to receive a request, refusals in the error format
 * and `X-Content-Type-Options: nosniff` on every response; with `options.connections`, a bound on
 * the connections held at once, per peer address and in all.
 */
export async function listen(handler: RequestListener, port: number, host = '0.0.0.0', options: ListenOptions = {}): Promise<Listening> {
  const requestTimeout = options.requestTimeoutMs ?? 60_000;
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const targetError = requestTargetError(req);
    if (targetError) return refuseRequest(req, res, targetError);
    handler(req, res);
  };
  const server = createServer(
    {
      keepAliveTimeout: 65_000,
      requestTimeout,
      headersTimeout: Math.min(60_000, requestTimeout),
      // How often Node looks for requests past those timeouts (its default is 30 s).
      connectionsCheckingInterval: Math.min(1_000, requestTimeout),
      insecureHTTPParser: false,
      maxHeaderSize: PARSER_MAX_HEAD_BYTES,
      // An HTTP/1.1 request without Host is refused below, in the error format, not by Node with an empty 400.
      requireHostHeader: false,
      ...(isExpressApp(handler) ? bornWithPrototypesOf(handler) : {}),
    },
    serve,
  );
  if (options.connections) limitConnections(server, options.connections);
  // Every field is kept, so that requestTargetError refuses too many instead of Node dropping them (MAX_HEADER_FIELDS).
  server.maxHeadersCount = 0;
  // With tracing on, a request the sampler leaves out skips the HTTP instrumentation (libs/tracing).
  sampledRequestsOnly(server);
  server.on('clientError', answerParserRefusal);
  server.on('connect', refuseTunnel);
  // `Expect: 100-continue`: Node would say "continue" to every such request before the app sees
  // it, so a client would send a body the app then refuses, and meet a closed connection. A body
  // announced over the limit is refused here instead, before the client sends a byte of it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const targetError = requestTargetError(req);
    if (targetError) return refuseRequest(req, res, targetError);
    if (Number(req.headers['content-length'] ?? 0) > MAX_BODY_BYTES) return refuseRequest(req, res, ApiError.payloadTooLarge());
    res.writeContinue();
    handler(req, res);
  });
  // Any other expectation (`Expect: foo`): Node would answer 417 itself, with an empty body and
  // none of our headers (no error format, no X-Request-Id). RFC 9110 §10.1.1 lets a server ignore
  // an expectation it does not know (417 is a MAY), as the gateway drops the header when it
  // forwards a request: the request is served as sent.
  server.on('checkExpectation', serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    server,
    port: bound,
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
