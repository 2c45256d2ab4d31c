// The gateway as attackers and their victims meet it: raw bytes on sockets wherever framing
// matters, a real upstream on loopback that records every request it parses, and the gateway's
// defaults (read from its config) unless a test says otherwise.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { type AddressInfo, connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import path from 'node:path';
import express, { type Request, type Response } from 'express';
import pino from 'pino';
import { errorHandler } from '@platform/errors';
import { newId } from '@platform/ids';
import { RETRY_AFTER_SECONDS } from '@platform/outgoing-calls';
import { createMetrics, Health, jsonBody, listen, type Listening } from '@platform/service-kit';
import { apiClient, testRedisUrl, tokenFor } from '@platform/test-kit';
import { createGateway } from './app';
import { MAX_CLIENT_LABELS } from './callers/caller-metrics';
import { loadGatewayConfig } from './config';

const JWT_SECRET = 'public-door-test-secret-public-door-test-01';
const supergraphPath = path.join(__dirname, 'graphql/supergraph.graphql');
const openapiPath = path.join(__dirname, 'openapi/openapi.json');
const trustedDocumentsPath = path.join(__dirname, 'graphql/trusted-documents.json');
const TRACE_ID = /^[\da-f]{32}$/;

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One client's TCP connection: writes raw bytes, reads the answers in order as they come. */
class RawClient {
  private buffer = Buffer.alloc(0);
  private wake: () => void = () => undefined;
  private closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  /** Every connection a test opened: afterEach destroys those a failed test left open. */
  static readonly opened = new Set<Socket>();

  /** A connection to the gateway from `localAddress` (Linux answers on all of 127.0.0.0/8). */
  static async open(port: number, localAddress = '127.0.0.1'): Promise<RawClient> {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    RawClient.opened.add(socket);
    socket.on('close', () => RawClient.opened.delete(socket));
    await once(socket, 'connect');
    return new RawClient(socket);
  }

  send(bytes: string): this {
    this.socket.write(bytes);
    return this;
  }

  /** The next answer (a 1xx counts); rejects when the connection closes first. */
  async response(options: { head?: boolean } = {}): Promise<RawResponse> {
    for (;;) {
      const parsed = this.parse(options.head ?? false);
      if (parsed) return parsed;
      if (this.closed) throw new Error('the connection closed before an answer');
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Resolves when the gateway closes the connection. */
  async closedByPeer(): Promise<void> {
    while (!this.closed) await new Promise<void>((resolve) => (this.wake = resolve));
  }

  /** Bytes received but not read as an answer. */
  unread(): string {
    return this.buffer.toString('latin1');
  }

  close(): void {
    this.socket.destroy();
  }

  private parse(head: boolean): RawResponse | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine, ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(statusLine.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).trim().toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
    let rest = this.buffer.subarray(end + 4);
    let body = Buffer.alloc(0);
    if (head || status < 200 || status === 204 || status === 304) {
      // no body
    } else if (headers['transfer-encoding'] === 'chunked') {
      const chunks: Buffer[] = [];
      for (;;) {
        const lineEnd = rest.indexOf('\r\n');
        if (lineEnd < 0) return undefined;
        const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
        if (rest.length < lineEnd + 2 + size + 2) return undefined;
        chunks.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
        rest = rest.subarray(lineEnd + 2 + size + 2);
        if (size === 0) break;
      }
      body = Buffer.concat(chunks);
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (rest.length < length) return undefined;
      body = rest.subarray(0, length);
      rest = rest.subarray(length);
    } else {
      if (!this.closed) return undefined;
      body = rest;
      rest = Buffer.alloc(0);
    }
    this.buffer = rest;
    return { status, headers, body: body.toString('utf8') };
  }
}

afterEach(() => {
  for (const socket of RawClient.opened) socket.destroy();
});

const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

/** A service on loopback that records every request it parses and says which one it answers. */
async function recordingService() {
  const seen: string[] = [];
  const created: string[] = [];
  const watchers: (() => void)[] = [];
  const notify = () => watchers.forEach((watch) => watch());
  const until = (condition: () => boolean) =>
    new Promise<void>((resolve) => {
      const watch = () => condition() && resolve();
      watchers.push(watch);
      watch();
    });
  const app = express();
  app.use((req, _res, next) => {
    seen.push(`${req.method} ${req.url}`);
    notify();
    next();
  });
  app.post('/tokens', jsonBody(), (req: Request, res: Response) => {
    if (req.body?.email === 'ada@example.com' && req.body?.password === 'right password') res.setHeader('Cache-Control', 'no-store').json({ accessToken: `token-for-${req.body.email}` });
    else res.status(401).json({ code: 'INVALID_CREDENTIALS', message: 'no', traceId: 'x', errors: [] });
  });
  app.use(express.raw({ type: () => true, limit: '2mb' }));
  const echo: express.RequestHandler = async (req, res) => {
    if (req.query.delay) await new Promise((resolve) => setTimeout(resolve, Number(req.query.delay)));
    const body = Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '';
    res.json({ method: req.method, path: req.originalUrl, body, headers: req.headers });
  };
  app.get('/users/reset', (req) => void req.socket.destroy());
  app.all(['/users', '/users/echo', '/users/:id'], echo);
  app.post('/orders', async (req, res) => {
    await new Promise((resolve) => setTimeout(resolve, 30)); // the work of placing an order
    created.push(req.headers['x-request-timeout-ms'] as string);
    res.status(201).json({ id: `order-${created.length}`, budget: req.headers['x-request-timeout-ms'] });
  });
  app.get('/products', (_req, res) => void res.json({ items: [], nextCursor: null, hasNext: false }));
  app.get('/orders', (_req, res) => void res.json({ items: [], nextCursor: null, hasNext: false }));
  app.post('/webhook-endpoints/:id/deliveries/:deliveryId/retry', (req, res) => void res.status(202).json({ id: req.params.deliveryId, status: 'PENDING' }));
  app.use(errorHandler);
  const server = await listen(app, 0, '127.0.0.1');
  return {
    server,
    seen,
    created,
    until,
  };
}

/** A "service" whose every answer is `answer`. */
async function garbageService(answer: string): Promise<{ url: string; server: TcpServer }> {
  const server = createTcpServer((socket) => socket.once('data', () => socket.end(answer)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** These tests are about the door, not revocation (auth/credentials.test.ts): every token is current. */
const everyTokenCurrent = { assertCurrent: async () => undefined, assertOwnerExists: async () => undefined, forget: () => undefined, revoked: () => undefined, forgetAll: () => undefined };

interface Gateway {
  server: Listening;
  metrics: ReturnType<typeof createMetrics>;
  stop(): Promise<void>;
}

/** The gateway as main.ts builds it, from its config loader (defaults unless `env` says). */
async function startGateway(upstreamUrl: string, env: Record<string, string> = {}): Promise<Gateway> {
  // TEST_REDIS_URL's Redis (CI) when set, as in production; otherwise memory.
  const redisUrl = testRedisUrl();
  const config = loadGatewayConfig({ NODE_ENV: 'test', JWT_SECRET, USERS_URL: upstreamUrl, ORDERS_URL: upstreamUrl, CATALOG_URL: upstreamUrl, RATE_LIMIT_POINTS: '100000', API_KEYS_CACHE_MS: '0', USAGE_RECORDING: 'off', ...(redisUrl ? { REDIS_URL: redisUrl } : {}), ...env });
  const metrics = createMetrics('gateway-test');
  const logger = pino({ level: 'silent' });
  const gateway = await createGateway(config, { logger, health: new Health(), metrics }, { supergraphPath, openapiPath, trustedDocumentsPath }, { credentials: everyTokenCurrent });
  if (redisUrl) expect(gateway.ready.sharedCounts).toBe(true);
  const server = await listen(gateway.app, 0, '127.0.0.1', { requestTimeoutMs: config.REQUEST_TIMEOUT_MS, connections: gateway.connections });
  return {
    server,
    metrics,
    stop: async () => {
      await server.close();
      for (const close of gateway.resources) await close();
    },
  };
}

let upstream: Awaited<ReturnType<typeof recordingService>>;
let gateway: Gateway;
let token: string;
const call = apiClient(() => gateway.server.url);

beforeAll(async () => {
  upstream = await recordingService();
  gateway = await startGateway(upstream.server.url, { REQUEST_TIMEOUT_MS: '2000' });
  token = (await tokenFor(JWT_SECRET)).token;
});

afterAll(async () => {
  await gateway?.stop();
  await upstream?.server.close();
});

describe('request framing (no desync between the gateway and a service)', () => {
  const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

  it('never lets a request smuggled inside a chunked body reach the service or another client, whatever the method', async () => {
    for (const method of METHODS) {
      const target = method === 'POST' ? '/v1/users' : '/v1/users/echo';
      // Answered late, so that were it parsed as a request, its answer would meet the next
      // request sent on that connection to the service.
      const smuggled = `GET /users/echo?smuggled=${method}&delay=50 HTTP/1.1\r\nHost: upstream\r\nX-Client: smuggled\r\n\r\n`;
      const attack = (n: number) =>
        `${method} ${target}?client=attacker-${method}-${n} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(smuggled)}0\r\n\r\n`;
      const victim = async (n: number) => {
        const res = await call('GET', `/v1/users/echo?client=victim-${method}-${n}`, { token });
        return res.body?.path;
      };
      const attackers = await Promise.all([RawClient.open(gateway.server.port), RawClient.open(gateway.server.port)]);
      // An attack and at once a victim (on the pooled connection the attack used), then victims
      // beside a second attack, then victims one after another.
      attackers[0].send(attack(0));
      const first = await attackers[0].response({ head: method === 'HEAD' });
      const next = await victim(0);
      const [second, ...during] = await Promise.all([attackers[1].send(attack(1)).response({ head: method === 'HEAD' }), victim(1), victim(2), victim(3)]);
      const after = [await victim(4), await victim(5)];
      // Each attacker got exactly one answer: its own.
      expect(attackers.map((attacker) => attacker.unread())).toEqual(['', '']);
      attackers.forEach((attacker) => attacker.close());

      expect([next, ...during, ...after]).toEqual([0, 1, 2, 3, 4, 5].map((n) => `/users/echo?client=victim-${method}-${n}`));
      for (const [n, answer] of [first, second].entries()) {
        if (method === 'OPTIONS') {
          expect(answer.status).toBe(405);
        } else {
          expect(answer.status).toBe(200);
          if (method !== 'HEAD') expect(JSON.parse(answer.body)).toMatchObject({ path: `${target.replace('/v1', '')}?client=attacker-${method}-${n}`, body: smuggled });
        }
      }
    }
    expect(upstream.seen.filter((line) => line.includes('smuggled'))).toEqual([]);
  });

  it.each([
    ['Content-Length beside Transfer-Encoding', 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n'],
    ['a transfer coding other than chunked', 'Transfer-Encoding: gzip, chunked\r\n', '0\r\n\r\n'],
    ['two Content-Length headers', 'Content-Length: 2\r\nContent-Length: 2\r\n', '{}'],
  ])('refuses %s with 400 in the error format and closes the connection', async (_name, framing, body) => {
    const before = upstream.seen.length;
    const client = await RawClient.open(gateway.server.port);
    client.send(`PATCH /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n${framing}\r\n${body}`);
    const res = await client.response();
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(JSON.parse(res.body)).toMatchObject({ code: 'MALFORMED_REQUEST', traceId: expect.stringMatching(TRACE_ID), errors: [] });
    await client.closedByPeer();
    expect(upstream.seen.length).toBe(before);
  });

  it('answers 431 in the error format when the headers are too large', async () => {
    const client = await RawClient.open(gateway.server.port);
    client.send(`GET /v1/products HTTP/1.1\r\nHost: gateway\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    const res = await client.response();
    expect(res.status).toBe(431);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'REQUEST_HEADERS_TOO_LARGE', traceId: expect.stringMatching(TRACE_ID), errors: [] });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers an HTTP/1.1 request without Host 400 in the error format, and never forwards it', async () => {
    const before = upstream.seen.length;
    const client = await RawClient.open(gateway.server.port);
    client.send(`GET /v1/users/echo HTTP/1.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    const res = await client.response();
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(res.body);
    expect(body).toEqual({ code: 'MALFORMED_REQUEST', message: expect.stringContaining('Host'), traceId: expect.stringMatching(TRACE_ID), errors: [] });
    expect(res.headers['x-request-id']).toBe(body.traceId);
    await client.closedByPeer();
    expect(upstream.seen.length).toBe(before);
  });

  it('answers a request with two Host headers 400 in the error format, and never forwards it (RFC 9112 §3.2)', async () => {
    const before = upstream.seen.length;
    const client = await RawClient.open(gateway.server.port);
    client.send(`GET /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nHost: elsewhere.example\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    const res = await client.response();
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ code: 'MALFORMED_REQUEST', message: expect.stringContaining('Host'), traceId: expect.stringMatching(TRACE_ID), errors: [] });
    await client.closedByPeer();
    expect(upstream.seen.length).toBe(before);
  });

  it.each(['HTTP/2.0', 'HTTP/0.9'])('answers a %s request line 400 in the error format, and never forwards it as HTTP/1.1', async (version) => {
    const before = upstream.seen.length;
    const client = await RawClient.open(gateway.server.port);
    client.send(`GET /v1/users/echo ${version}\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    const res = await client.response();
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ code: 'MALFORMED_REQUEST', message: `The request line names ${version}; this server speaks HTTP/1.1.`, traceId: expect.stringMatching(TRACE_ID), errors: [] });
    await client.closedByPeer();
    expect(upstream.seen.length).toBe(before);
  });

  it.each(['gateway:443', '/v1/users/echo'])('answers CONNECT %s 405 in the error format instead of dropping the connection, and never forwards it', async (target) => {
    const before = upstream.seen.length;
    const client = await RawClient.open(gateway.server.port);
    client.send(`CONNECT ${target} HTTP/1.1\r\nHost: gateway:443\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    const res = await client.response();
    expect([res.status, res.headers.allow, res.headers['x-content-type-options']]).toEqual([405, '', 'nosniff']);
    expect(JSON.parse(res.body)).toEqual({ code: 'METHOD_NOT_ALLOWED', message: expect.stringContaining('CONNECT'), traceId: expect.stringMatching(TRACE_ID), errors: [] });
    await client.closedByPeer();
    expect(upstream.seen.length).toBe(before);
  });

  it('serves an absolute-form request target as the path it names, and forwards that path (RFC 9112 §3.2.2)', async () => {
    const client = await RawClient.open(gateway.server.port);
    client.send(`GET http://gateway/v1/users/echo?client=absolute HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
    const res = await client.response();
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ method: 'GET', path: '/users/echo?client=absolute' });
    expect(upstream.seen).toContain('GET /users/echo?client=absolute');
  });

  it('refuses a request target that is neither a path nor an http(s) URL without credentials, and never forwards it', async () => {
    const before = upstream.seen.length;
    for (const target of ['a://users/v1/users/echo', 'http://user:secret@gateway/v1/users/echo']) {
      const client = await RawClient.open(gateway.server.port);
      client.send(`GET ${target} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\n\r\n`);
      const res = await client.response();
      expect({ target, status: res.status, code: JSON.parse(res.body).code }).toEqual({ target, status: 400, code: 'MALFORMED_REQUEST' });
      await client.closedByPeer();
    }
    expect(upstream.seen.length).toBe(before);
  });

  it('answers 431 in the error format after the answer already under way on the connection (pipelined)', async () => {
    // Past the parser's own 64 KiB bound: the parser refuses these bytes, not listen()'s checks.
    const client = await RawClient.open(gateway.server.port);
    client.send(`GET /v1/users/echo?delay=50 HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\n\r\nGET /v1/products HTTP/1.1\r\nHost: gateway\r\nX-Padding: ${'a'.repeat(70_000)}\r\n\r\n`);
    expect((await client.response()).status).toBe(200);
    const res = await client.response();
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'REQUEST_HEADERS_TOO_LARGE', traceId: expect.stringMatching(TRACE_ID), errors: [] });
    await client.closedByPeer();
  });

  it('gives a request whose chunked body breaks after its answer began one answer only, never a second refusal', async () => {
    const client = await RawClient.open(gateway.server.port);
    // POST is not a method of this path: 405 at once, before the broken chunk size is read.
    client.send(`POST /v1/users/me HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`);
    expect((await client.response()).status).toBe(405);
    await client.closedByPeer();
    expect(client.unread()).toBe('');
  });

  it('refuses an Expect: 100-continue body over 1 MiB with 413 in the error format, before asking for it', async () => {
    const client = await RawClient.open(gateway.server.port);
    client.send(`PATCH /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n`);
    const res = await client.response();
    expect(res.status).toBe(413);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = JSON.parse(res.body);
    expect(body).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: expect.any(String), traceId: expect.stringMatching(TRACE_ID), errors: [] });
    expect(res.headers['x-request-id']).toBe(body.traceId);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    await client.closedByPeer();
  });

  it('never forwards a body the client cut short: the service sees nothing of it, and the next clients are served', async () => {
    const client = await RawClient.open(gateway.server.port);
    // Content-Length promises 200 bytes; 31 come, then the client hangs up. Had the request gone
    // on before its body arrived, the next client's request could be read as the rest of it.
    client.send(`PATCH /v1/users/echo?client=cut HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"half": "a body that stops"`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.close();
    const next = await Promise.all([1, 2, 3].map((n) => call('GET', `/v1/users/echo?client=next-${n}`, { token })));
    expect(next.map((res) => res.body.path)).toEqual(['/users/echo?client=next-1', '/users/echo?client=next-2', '/users/echo?client=next-3']);
    expect(upstream.seen).not.toContain('PATCH /users/echo?client=cut');
  });

  it('forwards a chunked body and a Content-Length body with their exact length, byte for byte', async () => {
    const client = await RawClient.open(gateway.server.port);
    client.send(`DELETE /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk('{"a":')}${chunk('1}')}0\r\n\r\n`);
    const chunked = JSON.parse((await client.response()).body);
    expect(chunked).toMatchObject({ method: 'DELETE', body: '{"a":1}' });
    // Read whole at the gateway before it went on, so its length is known.
    expect(chunked.headers['transfer-encoding']).toBeUndefined();
    expect(chunked.headers['content-length']).toBe('7');
    client.send(`OPTIONS /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    expect((await client.response()).status).toBe(405);
    client.send(`DELETE /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{"b":2}`);
    const sized = JSON.parse((await client.response()).body);
    expect(sized).toMatchObject({ method: 'DELETE', body: '{"b":2}' });
    expect(sized.headers['content-length']).toBe('7');
    expect(sized.headers['transfer-encoding']).toBeUndefined();
    client.close();
  });
});

describe('body size', () => {
  it('counts a chunked body as it arrives: past 1 MiB, 413 in the error format, and the service sees nothing of it', async () => {
    const before = upstream.seen.length;
    const client = await RawClient.open(gateway.server.port);
    const piece = chunk(`"${'x'.repeat(64 * 1024 - 2)}"`);
    client.send(`PATCH /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${piece.repeat(17)}`);
    const res = await client.response();
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', traceId: expect.stringMatching(TRACE_ID) });
    await client.closedByPeer();
    expect(upstream.seen.length).toBe(before);
  });
});

describe('slow bodies and floods', () => {
  /** Sends `text` a piece every `everyMs`; resolves with the answer, or when the connection closes. */
  async function trickled(port: number, head: string, text: string, pieceBytes: number, everyMs: number): Promise<{ res?: RawResponse; elapsedMs: number }> {
    const client = await RawClient.open(port);
    const started = Date.now();
    client.send(head);
    let sent = 0;
    const drip = setInterval(() => {
      if (sent >= text.length || !client.socket.writable) return;
      client.socket.write(text.slice(sent, sent + pieceBytes));
      sent += pieceBytes;
    }, everyMs);
    try {
      const res = await client.response().catch(() => undefined);
      return { res, elapsedMs: Date.now() - started };
    } finally {
      clearInterval(drip);
      client.close();
    }
  }

  it('cuts a body slower than the minimum rate with 408 in the error format, long before the request timeout, and never forwards it', async () => {
    const strict = await startGateway(upstream.server.url, { CLIENT_BODY_TIMEOUT_MS: '500', CLIENT_BODY_MIN_RATE: '1024', REQUEST_TIMEOUT_MS: '10000' });
    try {
      const body = `{"a":"${'x'.repeat(500)}"}`;
      const head = `PATCH /v1/users/echo?client=trickle HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      // 10 bytes a second: the 508-byte body would take 50 s.
      const { res, elapsedMs } = await trickled(strict.server.port, head, body, 1, 100);
      expect(res?.status).toBe(408);
      expect(res?.headers['content-type']).toMatch(/^application\/json/);
      expect(JSON.parse(res?.body ?? '')).toMatchObject({ code: 'REQUEST_TIMEOUT', traceId: expect.stringMatching(TRACE_ID), errors: [] });
      expect(res?.headers.connection).toBe('close');
      expect(elapsedMs).toBeLessThan(5_000);
      expect(upstream.seen).not.toContain('PATCH /users/echo?client=trickle');
    } finally {
      await strict.stop();
    }
  });

  // What continues the request once its body has come in (the proxy) is still inside the request:
  // the service gets what is left of the client's time, not a fresh budget.
  it("forwards a body that keeps the minimum rate, even when it takes longer than CLIENT_BODY_TIMEOUT_MS, with what is left of the request's time", async () => {
    const strict = await startGateway(upstream.server.url, { CLIENT_BODY_TIMEOUT_MS: '500', CLIENT_BODY_MIN_RATE: '1024', REQUEST_TIMEOUT_MS: '10000' });
    try {
      const body = `{"a":"${'x'.repeat(3_000)}"}`;
      const head = `PATCH /v1/users/echo?client=steady HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      // 2,000 bytes a second: about 1.5 s, three times CLIENT_BODY_TIMEOUT_MS, at twice the minimum rate.
      const { res, elapsedMs } = await trickled(strict.server.port, head, body, 200, 100);
      expect(res?.status).toBe(200);
      expect(JSON.parse(res?.body ?? '').body).toBe(body);
      expect(elapsedMs).toBeGreaterThan(1_000);
      // 10 s from the head, less the body's time and the hop margin (50 ms).
      expect(Number(JSON.parse(res?.body ?? '').headers['x-request-timeout-ms'])).toBeLessThanOrEqual(10_000 - 1_000 - 50);
    } finally {
      await strict.stop();
    }
  });

  it("keeps room for other callers' bodies while one caller's stalled bodies fill the gateway's buffer: the biggest holder gives up its newest body", async () => {
    // Before: the bytes held at once (MAX_BUFFERED_BODY_BYTES) were one pool for everyone, so four
    // self-registered accounts × 64 in-flight bodies of 1 MiB, sent almost whole and then stalled,
    // made every other user's PATCH and POST a 503 for as long as they kept it up.
    const buffer = await startGateway(upstream.server.url, { MAX_BUFFERED_BODY_BYTES: String(1_048_576), REQUEST_TIMEOUT_MS: '10000' });
    const bufferCall = apiClient(() => buffer.server.url);
    const greedy = await tokenFor(JWT_SECRET);
    const stalled: RawClient[] = [];
    try {
      // Three bodies of 340 KiB, each announced as 400 KiB: 1,020 KiB held of the 1,024 KiB.
      for (let n = 1; n <= 3; n++) {
        const client = await RawClient.open(buffer.server.port);
        client.send(`PATCH /v1/users/echo?stalled=${n} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${greedy.token}\r\nContent-Type: application/json\r\nContent-Length: ${400 * 1024}\r\n\r\n${' '.repeat(340 * 1024)}`);
        stalled.push(client);
      }
      await new Promise((resolve) => setTimeout(resolve, 300)); // the gateway has read what was sent
      const body = { note: 'x'.repeat(10_000) };
      const other = await bufferCall('PATCH', '/v1/users/echo?client=other', { token, body });
      expect(other.status).toBe(200);
      expect(JSON.parse(other.body.body)).toEqual(body);
      // The greedy caller's newest body made the room, in the error format; its older ones still wait.
      const refused = await stalled[2].response();
      expect(refused.status).toBe(503);
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', traceId: expect.stringMatching(TRACE_ID), errors: [] });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(stalled[0].unread()).toBe('');
      expect(upstream.seen.filter((line) => line.includes('stalled='))).toEqual([]);
      // A caller cannot make room at another's expense once it holds the most itself.
      const more = await RawClient.open(buffer.server.port);
      more.send(`PATCH /v1/users/echo?stalled=4 HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${greedy.token}\r\nContent-Type: application/json\r\nContent-Length: ${400 * 1024}\r\n\r\n${' '.repeat(400 * 1024)}`);
      expect((await more.response()).status).toBe(503);
    } finally {
      for (const client of stalled) client.close();
      await buffer.stop();
    }
  });

  it('counts GraphQL bodies in that buffer: stalled ones past it are refused, and a whole one still runs', async () => {
    // Before: the GraphQL route's body was read by its own parser, outside the buffer, so each
    // account's 64 in-flight bodies of 1 MiB, stalled, held 64 MiB with no bound for all callers:
    // 20 accounts grew the gateway by 680 MB, and its pods' limit is 640 MiB.
    const buffer = await startGateway(upstream.server.url, { MAX_BUFFERED_BODY_BYTES: String(1_048_576), REQUEST_TIMEOUT_MS: '10000' });
    const greedy = await tokenFor(JWT_SECRET);
    const stalled: RawClient[] = [];
    try {
      for (let n = 1; n <= 4; n++) {
        const client = await RawClient.open(buffer.server.port);
        client.send(`POST /v1/graphql HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${greedy.token}\r\nContent-Type: application/json\r\nContent-Length: ${400 * 1024}\r\n\r\n${' '.repeat(340 * 1024)}`);
        stalled.push(client);
      }
      // Three fit (3 × 340 KiB); the fourth body does not. Which of the four the gateway began
      // last depends on when each connection's bytes were read (a loaded host may read them out of
      // order), so the first answer is awaited from any of them: one 503, the others still held.
      const first = await Promise.race(stalled.map((client, index) => client.response().then((answer) => ({ index, answer }))));
      expect(first.answer.status).toBe(503);
      expect(JSON.parse(first.answer.body)).toMatchObject({ code: 'SERVICE_UNAVAILABLE', errors: [] });
      expect(stalled.filter((_client, index) => index !== first.index).map((client) => client.unread())).toEqual(['', '', '']);
      for (const client of stalled) client.close();
      // A body read whole is parsed and refused as before: the GraphQL route still reads its bodies.
      const bufferCall = apiClient(() => buffer.server.url);
      const nested = await bufferCall('POST', '/v1/graphql', { token, body: '['.repeat(100) + ']'.repeat(100), headers: { 'content-type': 'application/json' } });
      expect(nested.status).toBe(400);
      expect(nested.body).toMatchObject({ code: 'MALFORMED_JSON', message: 'The request body nests deeper than 64 levels.' });
    } finally {
      for (const client of stalled) client.close();
      await buffer.stop();
    }
  });

  it('bounds in-flight requests per caller: the excess answers 429 RATE_LIMITED with Retry-After', async () => {
    const bounded = await startGateway(upstream.server.url, { MAX_IN_FLIGHT_PER_CALLER: '3' });
    const boundedCall = apiClient(() => bounded.server.url);
    const greedy = await tokenFor(JWT_SECRET);
    try {
      // Three requests the service takes a while to answer.
      const slow = [1, 2, 3].map((n) => boundedCall('GET', `/v1/users/echo?delay=1500&held=${n}`, { token: greedy.token }));
      await upstream.until(() => upstream.seen.filter((line) => /^GET \/users\/echo\?delay=1500&held=[123]$/.test(line)).length >= 3);
      const refused = await boundedCall('GET', '/v1/users/echo', { token: greedy.token });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', traceId: expect.stringMatching(TRACE_ID), errors: [] });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await boundedCall('GET', '/v1/users/echo', { token })).status).toBe(200); // another caller
      expect((await Promise.all(slow)).map((res) => res.status)).toEqual([200, 200, 200]);
      expect((await boundedCall('GET', '/v1/users/echo', { token: greedy.token })).status).toBe(200);
    } finally {
      await bounded.stop();
    }
  });

  it('bounds the queue for one service: past it, 503 SERVICE_UNAVAILABLE with Retry-After, while other services answer', async () => {
    const bounded = await startGateway(upstream.server.url, { UPSTREAM_LIMITS: JSON.stringify({ users: { maxSockets: 2, maxQueued: 1 } }) });
    const boundedCall = apiClient(() => bounded.server.url);
    const customers = await Promise.all([1, 2, 3].map(() => tokenFor(JWT_SECRET)));
    try {
      const slow = customers.map((customer, n) => boundedCall('GET', `/v1/users/echo?delay=1000&queue=${n}`, { token: customer.token }));
      await upstream.until(() => upstream.seen.filter((line) => /^GET \/users\/echo\?delay=1000&queue=\d$/.test(line)).length >= 2);
      const refused = await boundedCall('GET', '/v1/users/echo', { token });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', traceId: expect.stringMatching(TRACE_ID), errors: [] });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await boundedCall('GET', '/v1/products', { token })).status).toBe(200);
      expect((await Promise.all(slow)).map((res) => res.status)).toEqual([200, 200, 200]);
    } finally {
      await bounded.stop();
    }
  });

  it('passes on what is left of the budget after the wait for a connection, so the service never outlasts the gateway\'s timer', async () => {
    const bounded = await startGateway(upstream.server.url, { UPSTREAM_LIMITS: JSON.stringify({ users: { maxSockets: 1, maxQueued: 1 } }), REQUEST_TIMEOUT_MS: '5000' });
    const boundedCall = apiClient(() => bounded.server.url);
    const [first, second] = await Promise.all([tokenFor(JWT_SECRET), tokenFor(JWT_SECRET)]);
    try {
      const holding = boundedCall('GET', '/v1/users/echo?delay=1000&budget=holding', { token: first.token });
      await upstream.until(() => upstream.seen.includes('GET /users/echo?delay=1000&budget=holding'));
      // Waits about a second for the one connection, then goes on with what is left of its 5 s.
      const waited = await boundedCall('GET', '/v1/users/echo?budget=waited', { token: second.token });
      expect([(await holding).status, waited.status]).toEqual([200, 200]);
      expect(Number(waited.body.headers['x-request-timeout-ms'])).toBeLessThanOrEqual(5_000 - 900);
      expect(Number(waited.body.headers['x-request-timeout-ms'])).toBeGreaterThan(0);
    } finally {
      await bounded.stop();
    }
  });

  it('shares a busy service fairly: a caller with many requests waiting gives up its place to another caller, who is served next', async () => {
    const bounded = await startGateway(upstream.server.url, { UPSTREAM_LIMITS: JSON.stringify({ users: { maxSockets: 2, maxQueued: 4 } }) });
    const boundedCall = apiClient(() => bounded.server.url);
    const [greedy, modest] = await Promise.all([tokenFor(JWT_SECRET), tokenFor(JWT_SECRET)]);
    try {
      // Two at the service, four waiting: the wait is full.
      const flood = [];
      for (let n = 1; n <= 6; n++) {
        flood.push(boundedCall('GET', `/v1/users/echo?delay=300&fair=greedy-${n}`, { token: greedy.token }));
        if (n === 2) await upstream.until(() => upstream.seen.includes('GET /users/echo?delay=300&fair=greedy-2'));
      }
      await new Promise((resolve) => setTimeout(resolve, 50)); // the four are waiting
      const modestAnswer = await boundedCall('GET', '/v1/users/echo?delay=300&fair=modest', { token: modest.token });
      expect(modestAnswer.status).toBe(200);
      const statuses = (await Promise.all(flood)).map((res) => res.status);
      // The flood's newest request made room, and the modest caller went in the next turn, ahead of the flood's older waiting ones.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 503]);
      const order = upstream.seen.filter((line) => line.includes('fair='));
      expect(order.indexOf('GET /users/echo?delay=300&fair=modest')).toBeLessThan(order.indexOf('GET /users/echo?delay=300&fair=greedy-4'));
    } finally {
      await bounded.stop();
    }
  });
});

describe('slow clients and fairness', () => {
  it('keeps serving other callers while several accounts trickle request bodies at 1 byte/s: ≥ 99 % of their GETs answer 200', async () => {
    // The service's connections and queue (8 + 8) are fewer than the slow bodies (4 accounts × 8,
    // each account at its own in-flight limit): were a body's request sent on before the body
    // arrived, the slow bodies would hold every place and the other callers would get 503.
    const fair = await startGateway(upstream.server.url, { UPSTREAM_LIMITS: JSON.stringify({ orders: { maxSockets: 8, maxQueued: 8 } }), MAX_IN_FLIGHT_PER_CALLER: '8', REQUEST_TIMEOUT_MS: '10000' });
    const fairCall = apiClient(() => fair.server.url);
    const attackers = await Promise.all(Array.from({ length: 4 }, () => tokenFor(JWT_SECRET)));
    const victims = await Promise.all(Array.from({ length: 2 }, () => tokenFor(JWT_SECRET)));
    const slowSeen = () => upstream.seen.filter((line) => line.startsWith('POST /orders?slow=')).length;
    const seenBefore = slowSeen();
    const attackEnds = Date.now() + 15_000;
    const slowAnswers: number[] = [];
    let opened = 0;
    /** One slow connection: headers, then a byte a second; opened again whenever it is answered or cut. */
    const trickle = async (bearer: string): Promise<void> => {
      while (Date.now() < attackEnds) {
        const client = await RawClient.open(fair.server.port);
        client.send(`POST /v1/orders?slow=${opened++} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
        const drip = setInterval(() => client.socket.writable && client.socket.write(' '), 1_000);
        const stop = new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, attackEnds - Date.now())));
        await Promise.race([client.response().then((answer) => void slowAnswers.push(answer.status), () => undefined), stop]);
        clearInterval(drip);
        client.close();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    try {
      const attack = attackers.flatMap((attacker) => Array.from({ length: 8 }, () => trickle(attacker.token)));
      await new Promise((resolve) => setTimeout(resolve, 1_000)); // the slow bodies are in place
      const statuses: number[] = [];
      for (let n = 0; Date.now() < attackEnds - 500; n++) {
        statuses.push((await fairCall('GET', '/v1/orders', { token: victims[n % 2].token })).status);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await Promise.all(attack);
      const served = statuses.filter((status) => status === 200).length;
      expect({ asked: statuses.length > 50, servedShare: served / statuses.length >= 0.99 }).toEqual({ asked: true, servedShare: true });
      // The slow bodies were cut at the gateway (408; 429 when an account was at its in-flight
      // limit as it opened another), and none of them reached the service.
      expect(slowAnswers).toContain(408);
      expect(slowAnswers.filter((status) => status !== 408 && status !== 429)).toEqual([]);
      expect(slowSeen()).toBe(seenBefore);
    } finally {
      await fair.stop();
    }
  }, 40_000);
});

describe('token requests', () => {
  it('limits per email whatever JSON media type the body is sent as', async () => {
    const limited = await startGateway(upstream.server.url, { RATE_LIMIT_TOKENS_POINTS: '2' });
    const limitedCall = apiClient(() => limited.server.url);
    try {
      const body = { email: 'victim@example.com', password: 'guess' };
      const types = ['application/vnd.api+json', 'APPLICATION/JSON', 'Application/Json; Charset=UTF-8'];
      const statuses = [];
      for (const type of types) statuses.push((await limitedCall('POST', '/v1/tokens', { body, headers: { 'content-type': type } })).status);
      expect(statuses).toEqual([401, 401, 429]);
    } finally {
      await limited.stop();
    }
  });

  it.each([
    ['unreadable JSON', { 'content-type': 'application/json' }, '{"email": ', 400, 'MALFORMED_JSON'],
    ['unreadable JSON of another JSON media type', { 'content-type': 'application/vnd.api+json' }, '{"email": "a@example.com", ', 400, 'MALFORMED_JSON'],
    ['a body that is not JSON', { 'content-type': 'text/plain' }, 'email=a@example.com', 415, 'UNSUPPORTED_MEDIA_TYPE'],
  ])('refuses a token request with %s in the error format, before it reaches the service', async (_name, headers, body, status, code) => {
    const before = upstream.seen.length;
    const res = await call('POST', '/v1/tokens', { body, headers });
    expect(res.status).toBe(status);
    expect(res.body).toMatchObject({ code, traceId: expect.stringMatching(TRACE_ID) });
    expect(upstream.seen.length).toBe(before);
  });

  it('limits a token request without an email per IP: it can never be granted a token, and is never unlimited', async () => {
    const limited = await startGateway(upstream.server.url, { RATE_LIMIT_TOKENS_IP_POINTS: '2' });
    const limitedCall = apiClient(() => limited.server.url);
    try {
      const statuses = [];
      for (const body of [undefined, { password: 'x' }, { email: ['a@example.com'], password: 'x' }]) statuses.push((await limitedCall('POST', '/v1/tokens', { body })).status);
      expect(statuses).toEqual([401, 401, 429]);
    } finally {
      await limited.stop();
    }
  });

  it("lets nobody lock another account out of sign-in: wrong passwords from one address spend that address's count, and many addresses a looser one", async () => {
    const limited = await startGateway(upstream.server.url, { RATE_LIMIT_TOKENS_POINTS: '2', RATE_LIMIT_TOKENS_EMAIL_POINTS: '5' });
    const limitedCall = apiClient(() => limited.server.url);
    // Clients at their own addresses (the gateway believes X-Forwarded-For from loopback, its default TRUST_PROXY).
    const from = (address: string, password: string) => limitedCall('POST', '/v1/tokens', { body: { email: 'ada@example.com', password }, headers: { 'x-forwarded-for': address } });
    try {
      // One address keeps trying: past its 2 attempts it is refused, and its refused tries spend nothing of the account's count.
      const attacker = [];
      for (let i = 0; i < 8; i++) attacker.push((await from('198.51.100.7', `guess-${i}`)).status);
      expect(attacker).toEqual([401, 401, 429, 429, 429, 429, 429, 429]);
      // The owner, at another address, signs in.
      const owner = await from('203.0.113.5', 'right password');
      expect([owner.status, owner.body.accessToken]).toEqual([200, 'token-for-ada@example.com']);
      // Guessing from many addresses meets the account's own bound, 5: the attacker's 2, the owner's 1, then two more.
      const spread = [(await from('198.51.100.8', 'guess')).status, (await from('198.51.100.9', 'guess')).status, (await from('198.51.100.10', 'guess')).status];
      expect(spread).toEqual([401, 401, 429]);
      expect((await from('198.51.100.9', 'guess')).headers.get('ratelimit-policy')).toContain('"tokens-email"');
    } finally {
      await limited.stop();
    }
  });

  it("counts sign-ups in the address's password work with sign-ins, whatever account or key each carries", async () => {
    const limited = await startGateway(upstream.server.url, { RATE_LIMIT_TOKENS_IP_POINTS: '3' });
    const limitedCall = apiClient(() => limited.server.url);
    try {
      const other = (await tokenFor(JWT_SECRET)).token;
      const signUp = { name: 'New', email: 'new@example.com', password: 'correct-horse-1' };
      const statuses = [
        (await limitedCall('POST', '/v1/users', { body: signUp })).status,
        (await limitedCall('POST', '/v1/users', { body: signUp, token })).status,
        (await limitedCall('POST', '/v1/users', { body: signUp, token: other })).status,
      ];
      const refused = await limitedCall('POST', '/v1/tokens', { body: { email: 'ada@example.com', password: 'right password' } });
      const refusedSignUp = await limitedCall('POST', '/v1/users', { body: signUp, token: (await tokenFor(JWT_SECRET)).token });
      expect(statuses).toEqual([200, 200, 200]);
      expect([refused.status, refusedSignUp.status]).toEqual([429, 429]);
      expect(refusedSignUp.body.code).toBe('RATE_LIMITED');
      expect(refusedSignUp.headers.get('ratelimit-policy')).toContain('"tokens-ip"');
    } finally {
      await limited.stop();
    }
  });

  const credentials = '{"email":"ada@example.com","password":"right password"}';

  it.each([
    ['an upper-case Content-Type', `Content-Type: APPLICATION/JSON\r\nContent-Length: ${credentials.length}\r\n\r\n${credentials}`],
    ['a chunked body', `Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(credentials.slice(0, 10))}${chunk(credentials.slice(10))}0\r\n\r\n`],
    ['application/vnd.api+json', `Content-Type: application/vnd.api+json\r\nContent-Length: ${credentials.length}\r\n\r\n${credentials}`],
  ])('issues a token for right credentials sent with %s', async (_name, rest) => {
    const client = await RawClient.open(gateway.server.port);
    client.send(`POST /v1/tokens HTTP/1.1\r\nHost: gateway\r\n${rest}`);
    const res = await client.response();
    client.close();
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ accessToken: 'token-for-ada@example.com' });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('issues a token for right credentials sent with Expect: 100-continue', async () => {
    const client = await RawClient.open(gateway.server.port);
    client.send(`POST /v1/tokens HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\nContent-Length: ${credentials.length}\r\nExpect: 100-continue\r\n\r\n`);
    expect((await client.response()).status).toBe(100);
    client.send(credentials);
    const res = await client.response();
    client.close();
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ accessToken: 'token-for-ada@example.com' });
  });
});

describe('webhook deliveries sent again by hand', () => {
  it("bounds the webhook deliveries an account has sent again by hand, whatever deliveries it names: 429 with Retry-After, its other calls untouched", async () => {
    const limited = await startGateway(upstream.server.url, { RATE_LIMIT_WEBHOOK_RETRIES_POINTS: '3' });
    const limitedCall = apiClient(() => limited.server.url);
    try {
      const account = (await tokenFor(JWT_SECRET)).token;
      const retry = (deliveryId: string, as = account) => limitedCall('POST', `/v1/webhook-endpoints/${newId()}/deliveries/${deliveryId}/retry`, { token: as });
      const sent = upstream.seen.filter((line) => line.endsWith('/retry')).length;
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await retry(newId())).status);
      expect(statuses).toEqual([202, 202, 202, 429, 429]);
      // Each POST the platform would make to a receiver is one the service was asked for: 3, not 5.
      expect(upstream.seen.filter((line) => line.endsWith('/retry')).length - sent).toBe(3);
      const refused = await retry(newId());
      expect([refused.status, refused.body.code, refused.body.traceId]).toEqual([429, 'RATE_LIMITED', expect.any(String)]);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('ratelimit-policy')).toContain('"webhook-retries";q=3;w=60');
      // The account's other calls spend their own budget, and another account's retries theirs.
      expect((await limitedCall('GET', '/v1/users/me', { token: account })).status).toBe(200);
      expect((await retry(newId(), (await tokenFor(JWT_SECRET)).token)).status).toBe(202);
    } finally {
      await limited.stop();
    }
  });
});

describe('client input is a 4xx, never a 5xx', () => {
  it('serves a request with an expectation it does not know as sent, with every header of ours, never a bare 417', async () => {
    const client = await RawClient.open(gateway.server.port);
    client.send(`GET /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nExpect: foo\r\n\r\n`);
    const res = await client.response();
    client.close();
    expect([res.status, res.headers['x-request-id'], res.headers['x-content-type-options']]).toEqual([200, expect.stringMatching(TRACE_ID), 'nosniff']);
    expect(JSON.parse(res.body).headers.expect).toBeUndefined();
  });

  it('answers 400 in the error format for a malformed %-encoding in the path', async () => {
    const before = upstream.seen.length;
    const res = await call('GET', '/v1/users/%E0%A4%A', { token });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'MALFORMED_REQUEST', traceId: expect.stringMatching(TRACE_ID), errors: [] });
    expect(upstream.seen.length).toBe(before);
  });

  it('forwards an HTTP/1.0 request that names no Host (legal in 1.0) instead of failing on it', async () => {
    const client = await RawClient.open(gateway.server.port);
    client.send(`GET /v1/users/echo HTTP/1.0\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    const res = await client.response();
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).headers['x-forwarded-host']).toBeUndefined();
  });

  it('answers 415 for a request body with a content coding, which the gateway does not decode', async () => {
    const before = upstream.seen.length;
    for (const coding of ['gzip', 'br', 'deflate, identity']) {
      const res = await call('PATCH', '/v1/users/echo', { token, body: '{"a":1}', headers: { 'content-encoding': coding } });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', traceId: expect.stringMatching(TRACE_ID) });
    }
    expect((await call('PATCH', '/v1/users/echo', { token, body: '{"a":1}', headers: { 'content-encoding': 'identity' } })).status).toBe(200);
    expect(upstream.seen.length).toBe(before + 1);
  });

  it('ignores a client-sent deadline: an order is placed and answered, with the gateway\'s own budget passed on', async () => {
    const res = await call('POST', '/v1/orders', { token, body: { items: [] }, headers: { 'x-request-timeout-ms': '1' } });
    expect(res.status).toBe(201);
    expect(Number(res.body.budget)).toBeGreaterThan(1_000);
  });

  it('strips internal headers a client sends, and X-Forwarded-* from a peer that is not a trusted proxy', async () => {
    const spoofed = { 'x-forwarded-prefix': '/evil', 'x-forwarded-for': '203.0.113.9', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', forwarded: 'for=203.0.113.9' };
    const untrusting = await startGateway(upstream.server.url, { TRUST_PROXY: '10.0.0.1' });
    try {
      const seen = (await apiClient(() => untrusting.server.url)('GET', '/v1/users/echo', { token, headers: spoofed })).body.headers;
      expect(seen).toMatchObject({ 'x-forwarded-prefix': '/v1', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http', 'x-forwarded-host': expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
      expect(seen.forwarded).toBeUndefined();
    } finally {
      await untrusting.stop();
    }
    // From a trusted proxy (loopback here), the chain is kept and this hop appended.
    const trusted = (await call('GET', '/v1/users/echo', { token, headers: spoofed })).body.headers;
    expect(trusted).toMatchObject({ 'x-forwarded-prefix': '/v1', 'x-forwarded-for': '203.0.113.9, 127.0.0.1', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' });
  });
});

describe('when a service is down or broken', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After for a refused connection', async () => {
    const down = await startGateway('http://127.0.0.1:1');
    try {
      const res = await apiClient(() => down.server.url)('GET', '/v1/products', { token, headers: { accept: 'application/problem+json' } });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', instance: '/v1/products', traceId: expect.stringMatching(TRACE_ID) });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(res.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS)); // the one policy of libs/outgoing-calls (the proxy said 5 before)
    } finally {
      await down.stop();
    }
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when the service drops the connection before answering', async () => {
    const res = await call('GET', '/v1/users/reset', { token });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', errors: [] });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(res.headers.get('retry-after')).toBe(String(RETRY_AFTER_SECONDS));
  });

  it.each([
    ['a Content-Length that is not a number', 'HTTP/1.1 200 OK\r\nContent-Length: banana\r\n\r\n{}'],
    ['a status below 100', 'HTTP/1.1 099 Odd\r\nContent-Length: 2\r\n\r\n{}'],
    ['a status above 599', 'HTTP/1.1 700 Odd\r\nContent-Length: 2\r\n\r\n{}'],
  ])('answers 502 BAD_GATEWAY for an answer with %s, and serves on', async (_name, answer) => {
    const garbage = await garbageService(answer);
    const broken = await startGateway(garbage.url);
    try {
      const res = await apiClient(() => broken.server.url)('GET', '/v1/products', { token });
      expect(res.status).toBe(502);
      expect(res.body).toMatchObject({ code: 'BAD_GATEWAY', errors: [] });
      expect((await fetch(`${broken.server.url}/healthz`)).status).toBe(200);
    } finally {
      await broken.stop();
      garbage.server.close();
    }
  });
});

describe('response headers', () => {
  it('sends nosniff everywhere and no-store on every answer but public documents', async () => {
    const answers = {
      proxied: await call('GET', '/v1/users/echo', { token }),
      refused: await call('GET', '/v1/products'),
      token: await call('POST', '/v1/tokens', { body: { email: 'ada@example.com', password: 'wrong' } }),
      unknown: await call('GET', '/v1/nothing', { token }),
    };
    for (const [name, res] of Object.entries(answers)) expect([name, res.headers.get('x-content-type-options')]).toEqual([name, 'nosniff']);
    // Every answer of a route behind a token, and the token route's, is personal.
    for (const name of ['proxied', 'refused', 'token'] as const) expect([name, answers[name].headers.get('cache-control')]).toEqual([name, 'no-store']);
    const openapi = await call('GET', '/v1/openapi.json');
    expect(openapi.headers.get('x-content-type-options')).toBe('nosniff');
    expect(openapi.headers.get('cache-control')).not.toMatch(/no-store/);
    expect((await fetch(`${gateway.server.url}/healthz`)).headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('labels callers without user ids: authenticated clients by a known shape of User-Agent, others not at all', async () => {
    const customer = await tokenFor(JWT_SECRET);
    await call('GET', '/v1/products', { token: customer.token, headers: { 'user-agent': 'shop-app/3.2.1 (ios)' } });
    await call('GET', '/v1/products', { token: customer.token });
    await call('GET', '/v1/products', { token: customer.token, headers: { 'user-agent': `crafted/${'9'.repeat(12)}` } });
    await call('GET', '/v1/products', { headers: { 'user-agent': 'probe/1.0' } });
    const text = await gateway.metrics.registry.getSingleMetricAsString('gateway_requests_total');
    expect(text).not.toContain(customer.userId);
    expect(text).not.toContain('probe');
    expect(text).not.toContain('crafted');
    expect(text).toContain('route="/products",method="GET",status="200",client="shop-app/3.2.1"');
    expect(text).toContain('route="/products",method="GET",status="200",client="other"');
    expect(text).toContain('route="/products",method="GET",status="401",client="anonymous"');
  });

  it("keeps a place for clients released later: one account's made-up User-Agents take five client labels, not all 200", async () => {
    const flooder = await tokenFor(JWT_SECRET);
    for (let i = 0; i < 210; i++) await call('GET', '/v1/openapi.json', { token: flooder.token, headers: { 'user-agent': `flood${i}/1.0` } });
    const customer = await tokenFor(JWT_SECRET);
    await call('GET', '/v1/products', { token: customer.token, headers: { 'user-agent': 'shop-app/4.0.0' } });
    const text = await gateway.metrics.registry.getSingleMetricAsString('gateway_requests_total');
    expect(text).toContain('route="/products",method="GET",status="200",client="shop-app/4.0.0"');
    expect(new Set(text.match(/client="flood\d+\/1\.0"/g)).size).toBe(5);
    expect(text).toContain('route="/openapi.json",method="GET",status="200",client="other"');
  });

  it('keeps counting known clients and gives a release a few users run its label after forty-five accounts flood it, its series bounded', async () => {
    const known = await tokenFor(JWT_SECRET);
    await call('GET', '/v1/products', { token: known.token, headers: { 'user-agent': 'shop-app/5.0.0' } });
    // Each account: its five-place share of made-up User-Agents, over several routes and statuses.
    const routes = ['/v1/openapi.json', '/v1/products', '/v1/nothing-here'];
    for (let account = 0; account < 45; account++) {
      const { token } = await tokenFor(JWT_SECRET);
      for (let i = 0; i < 8; i++) await call('GET', routes[i % routes.length], { token, headers: { 'user-agent': `sybil${account}x${i}/1.0` } });
    }
    for (let user = 0; user < 2; user++) await call('GET', '/v1/products', { token: (await tokenFor(JWT_SECRET)).token, headers: { 'user-agent': 'shop-app/5.1.0' } });
    await call('GET', '/v1/products', { token: known.token, headers: { 'user-agent': 'shop-app/5.0.0' } });
    const text = await gateway.metrics.registry.getSingleMetricAsString('gateway_requests_total');
    expect(text).toMatch(/route="\/products",method="GET",status="200",client="shop-app\/5\.0\.0"[^}]*\} 2\n/);
    expect(text).toContain('route="/products",method="GET",status="200",client="shop-app/5.1.0"');
    // 200 client places and `other`/`anonymous`; each place as many series as the flood gave it.
    const clients = new Set(text.match(/client="[^"]*"/g));
    expect(clients.size).toBeLessThanOrEqual(MAX_CLIENT_LABELS + 2);
    const series = text.split('\n').filter((line) => line.startsWith('gateway_requests_total{'));
    expect(series.filter((line) => /client="sybil/.test(line)).length).toBeLessThanOrEqual(MAX_CLIENT_LABELS * routes.length);
  });
});

describe('connections at the door (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS)', () => {
  const served = async (client: RawClient) => (await client.send('GET /v1/openapi.json HTTP/1.1\r\nHost: gateway\r\n\r\n').response()).status;
  /** Opens `count` connections from `from`, in order: the gateway accepts them in the order they came. */
  const openFrom = async (port: number, from: string, count: number) => {
    const clients: RawClient[] = [];
    for (let i = 0; i < count; i++) clients.push(await RawClient.open(port, from));
    return clients;
  };
  /** The refusal a connection over a limit gets at once, before it sends a byte, and that it is closed after it. */
  const refusal = async (client: RawClient) => {
    const res = await client.response();
    await client.closedByPeer();
    return { status: res.status, code: JSON.parse(res.body).code, retryAfter: res.headers['retry-after'], connection: res.headers.connection, requestId: res.headers['x-request-id'] };
  };
  /**
   * Resolves once the gateway's socket count is `count`: a connection a client closed is freed when
   * the gateway sees it close. Node counts a socket out as it destroys it; its 'close', which frees
   * the slot, comes in the same turn of the event loop, before the next connection is accepted.
   */
  const until = async (gateway: Gateway, count: number) => {
    const open = () => new Promise<number>((resolve, reject) => gateway.server.server.getConnections((error, n) => (error ? reject(error) : resolve(n))));
    while ((await open()) !== count) await new Promise((resolve) => setImmediate(resolve));
  };
  const refusedCount = async (gateway: Gateway, limit: string) => (await gateway.metrics.registry.getSingleMetric('gateway_connections_refused_total')!.get()).values.find((value) => value.labels.limit === limit)?.value;

  it('refuses connections from one address past its limit with 429 RATE_LIMITED in the error format, serves the ones within it and those of another address, and frees a slot when one closes', async () => {
    const door = await startGateway(upstream.server.url, { TRUST_PROXY: 'false', MAX_CONNECTIONS_PER_ADDRESS: '4', MAX_CONNECTIONS: '16' });
    try {
      const held = await openFrom(door.server.port, '127.0.0.1', 4);
      const [extra, another] = await openFrom(door.server.port, '127.0.0.1', 2);
      for (const client of [extra, another]) expect(await refusal(client)).toEqual({ status: 429, code: 'RATE_LIMITED', retryAfter: '1', connection: 'close', requestId: expect.stringMatching(TRACE_ID) });
      // A client that sends its request at once, as any HTTP client does, reads the same refusal.
      const eager = (await RawClient.open(door.server.port, '127.0.0.1')).send('GET /v1/openapi.json HTTP/1.1\r\nHost: gateway\r\n\r\n');
      expect((await refusal(eager)).status).toBe(429);
      // The four within the limit are served, and keep being served.
      for (const client of held) expect(await served(client)).toBe(200);
      // Another address is served while the first is at its limit.
      const [neighbour] = await openFrom(door.server.port, '127.0.0.2', 1);
      expect(await served(neighbour)).toBe(200);
      // Two closed: two new connections from the first address are served, a third is refused.
      held.splice(0, 2).forEach((client) => client.close());
      await until(door, 3);
      const again = await openFrom(door.server.port, '127.0.0.1', 3);
      expect([await served(again[0]), await served(again[1])]).toEqual([200, 200]);
      expect((await refusal(again[2])).status).toBe(429);
      for (const client of held) expect(await served(client)).toBe(200);
      expect(await refusedCount(door, 'address')).toBe(4);
      expect(await refusedCount(door, 'total')).toBe(0);
    } finally {
      await door.stop();
    }
  });

  it('counts the addresses of one IPv6 /64 as one client, as the rate limits do: rotating among them brings no new connections', async () => {
    const door = await startGateway(upstream.server.url, { TRUST_PROXY: 'false', MAX_CONNECTIONS_PER_ADDRESS: '2', MAX_CONNECTIONS: '16' });
    try {
      // Loopback has one IPv6 address: each accepted connection is shown to the limit as coming
      // from the next of these peers, the first three in one /64 (one subscriber's), the last in another.
      const peers = ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::3', '2001:db8:1:3::1'];
      door.server.server.prependListener('connection', (socket: Socket) => Object.defineProperty(socket, 'remoteAddress', { value: peers.shift() }));
      const [first, second, third, otherBlock] = await openFrom(door.server.port, '127.0.0.1', 4);
      expect(await refusal(third)).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
      expect([await served(first), await served(second), await served(otherBlock)]).toEqual([200, 200, 200]);
    } finally {
      await door.stop();
    }
  });

  it('holds a proxy it trusts to the total limit only: past MAX_CONNECTIONS every peer gets 503 SERVICE_UNAVAILABLE, until a connection closes', async () => {
    const door = await startGateway(upstream.server.url, { TRUST_PROXY: '127.0.0.3', MAX_CONNECTIONS_PER_ADDRESS: '2', MAX_CONNECTIONS: '5' });
    try {
      // The proxy carries many clients: five connections from it, more than one address may hold, are served.
      const proxied = await openFrom(door.server.port, '127.0.0.3', 5);
      for (const client of proxied) expect(await served(client)).toBe(200);
      // The process is full: the proxy's sixth and a direct client's first are refused.
      const [sixth] = await openFrom(door.server.port, '127.0.0.3', 1);
      const [direct] = await openFrom(door.server.port, '127.0.0.1', 1);
      for (const client of [sixth, direct]) expect(await refusal(client)).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: '1', connection: 'close', requestId: expect.stringMatching(TRACE_ID) });
      proxied.pop()!.close();
      await until(door, 4);
      const [freed] = await openFrom(door.server.port, '127.0.0.1', 1);
      expect(await served(freed)).toBe(200);
      expect(await refusedCount(door, 'total')).toBe(2);
    } finally {
      await door.stop();
    }
  });
});

describe('behind a proxy (TRUST_PROXY)', () => {
  /** The value the Kubernetes manifests give the gateway (one Ingress hop in front). */
  const manifestValue = /^\s*TRUST_PROXY:\s*'([^']*)'/m.exec(readFileSync(path.join(__dirname, '../../../deploy/k8s/base/gateway/configmap.yaml'), 'utf8'))?.[1];
  const read = (value: string) => loadGatewayConfig({ NODE_ENV: 'test', JWT_SECRET, TRUST_PROXY: value }).TRUST_PROXY;

  it("reads the manifests' value as one hop, and true, false, hop counts and address lists as Express means them", () => {
    expect(manifestValue).toBe('1');
    expect(read(manifestValue as string)).toBe(1);
    expect(read('2')).toBe(2);
    expect(read('false')).toBe(false);
    expect(read('TRUE')).toBe(true);
    expect(read('loopback, 10.0.0.0/8,fd00::/8, uniquelocal')).toEqual(['loopback', '10.0.0.0/8', 'fd00::/8', 'uniquelocal']);
    expect(loadGatewayConfig({ NODE_ENV: 'test', JWT_SECRET }).TRUST_PROXY).toEqual(['loopback']);
    for (const unreadable of ['ingress', '10.0.0.0/99', '', '-1']) expect(() => read(unreadable)).toThrow();
  });

  /** A proxy as the Ingress is: forwards each request to `target`, appending its peer's address to X-Forwarded-For. */
  async function startForwardingProxy(target: string) {
    const server = createHttpServer((req, res) => {
      const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
      const out = httpRequest(`${target}${req.url}`, { method: req.method, headers: { ...req.headers, 'x-forwarded-for': forwardedFor } }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => res.writeHead(502).end());
      req.pipe(out);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  }

  /** GET `url` from the loopback address `from` (Linux answers on all of 127.0.0.0/8): the status. */
  function statusFrom(from: string, url: string, headers: Record<string, string> = {}): Promise<number> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { localAddress: from, headers: { accept: 'application/json', ...headers }, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('gives two clients behind the proxy budgets of their own, and a spoofed X-Forwarded-For through it no new one', async () => {
    const gateway = await startGateway(upstream.server.url, { TRUST_PROXY: manifestValue as string, RATE_LIMIT_POINTS: '3' });
    const proxy = await startForwardingProxy(gateway.server.url);
    const page = `${proxy.url}/v1/openapi.json`;
    try {
      const first = [];
      for (let i = 0; i < 4; i++) first.push(await statusFrom('127.0.0.2', page));
      expect(first).toEqual([200, 200, 200, 429]);
      // Another client behind the same proxy: its own budget (before, both were the proxy's address).
      expect(await statusFrom('127.0.0.3', page)).toBe(200);
      // The first client inventing addresses: the proxy's hop is the one believed, so still 429.
      for (const spoofed of ['198.51.100.1', '198.51.100.2', '127.0.0.3']) expect(await statusFrom('127.0.0.2', page, { 'x-forwarded-for': spoofed })).toBe(429);
    } finally {
      await proxy.close();
      await gateway.stop();
    }
  });

  it('believes no X-Forwarded-For from a peer it does not trust: a client calling directly cannot spoof a budget', async () => {
    // Only the proxy's own address is trusted; the client calls the gateway from another one.
    const gateway = await startGateway(upstream.server.url, { TRUST_PROXY: '127.0.0.1', RATE_LIMIT_POINTS: '3' });
    const proxy = await startForwardingProxy(gateway.server.url);
    try {
      const direct = [];
      for (let i = 0; i < 5; i++) direct.push(await statusFrom('127.0.0.4', `${gateway.server.url}/v1/openapi.json`, { 'x-forwarded-for': `198.51.100.${i}` }));
      expect(direct).toEqual([200, 200, 200, 429, 429]);
      // Through the trusted proxy the same client is told apart from others.
      expect(await statusFrom('127.0.0.5', `${proxy.url}/v1/openapi.json`)).toBe(200);
    } finally {
      await proxy.close();
      await gateway.stop();
    }
  });
});
