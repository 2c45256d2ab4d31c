// The gateway as attackers and their victims meet it: raw bytes on sockets wherever framing
// matters, a real upstream on loopback that records every request it parses, and the gateway's
// defaults (read from its config) unless a test says otherwise.
import { once } from 'node:events';
import { type AddressInfo, connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import path from 'node:path';
import express, { type Request, type Response } from 'express';
import pino from 'pino';
import { errorHandler } from '@platform/errors';
import { createMetrics, Health, jsonBody, listen, type Listening } from '@platform/service-kit';
import { apiClient, testRedisUrl, tokenFor } from '@platform/test-kit';
import { createGatewayApp } from './app';
import { loadGatewayConfig } from './config';
import { policiesOf } from './rate-limit/policies';
import { connectRedis, RateLimits, redisReady } from './rate-limit/rate-limits';

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

  static async open(port: number): Promise<RawClient> {
    const socket = connect(port, '127.0.0.1');
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

const chunk = (text: string) => `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;

/** A service on loopback that records every request it parses and says which one it answers. */
async function recordingService() {
  const seen: string[] = [];
  const created: string[] = [];
  let cutShort = 0;
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
    // A request whose connection closes before its body is complete: the gateway cut it.
    req.once('close', () => {
      if (!req.complete) cutShort += 1;
      notify();
    });
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
  app.use(errorHandler);
  const server = await listen(app, 0, '127.0.0.1');
  return {
    server,
    seen,
    created,
    get cutShort() {
      return cutShort;
    },
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
const everyTokenCurrent = { assertCurrent: async () => undefined };

interface Gateway {
  server: Listening;
  metrics: ReturnType<typeof createMetrics>;
  stop(): Promise<void>;
}

/** The gateway as main.ts builds it, from its config loader (defaults unless `env` says). */
async function startGateway(upstreamUrl: string, env: Record<string, string> = {}): Promise<Gateway> {
  const config = loadGatewayConfig({ NODE_ENV: 'test', JWT_SECRET, USERS_URL: upstreamUrl, ORDERS_URL: upstreamUrl, CATALOG_URL: upstreamUrl, RATE_LIMIT_POINTS: '100000', ...env });
  const metrics = createMetrics('gateway-test');
  const logger = pino({ level: 'silent' });
  // TEST_REDIS_URL's Redis (CI) when set, as in production; otherwise memory.
  const redisUrl = testRedisUrl();
  const redis = redisUrl ? connectRedis(redisUrl, { commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS }, logger) : undefined;
  if (redis) expect(await redisReady(redis, 5_000)).toBe(true);
  const rateLimits = new RateLimits(policiesOf(config), { redis, logger, registry: metrics.registry });
  const { app, stopGraph } = await createGatewayApp({ config, rateLimits, credentials: everyTokenCurrent, logger, health: new Health(), metrics, supergraphPath, openapiPath, trustedDocumentsPath });
  const server = await listen(app, 0, '127.0.0.1', { requestTimeoutMs: config.REQUEST_TIMEOUT_MS });
  return {
    server,
    metrics,
    stop: async () => {
      await server.close();
      await stopGraph();
      rateLimits.stop();
      redis?.disconnect();
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

  it('never reuses a service connection whose request body was cut short by the client', async () => {
    const cutBefore = upstream.cutShort;
    const client = await RawClient.open(gateway.server.port);
    // Content-Length promises 200 bytes; 31 come, then the client hangs up. Were the service's
    // connection reused, the next client's request would be read as the rest of this body.
    client.send(`PATCH /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"half": "a body that stops"`);
    await upstream.until(() => upstream.seen.at(-1) === 'PATCH /users/echo');
    client.close();
    await upstream.until(() => upstream.cutShort > cutBefore);
    const next = await Promise.all([1, 2, 3].map((n) => call('GET', `/v1/users/echo?client=next-${n}`, { token })));
    expect(next.map((res) => res.body.path)).toEqual(['/users/echo?client=next-1', '/users/echo?client=next-2', '/users/echo?client=next-3']);
  });

  it('forwards a chunked body as chunked and a Content-Length body with its length, byte for byte', async () => {
    const client = await RawClient.open(gateway.server.port);
    client.send(`DELETE /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk('{"a":')}${chunk('1}')}0\r\n\r\n`);
    const chunked = JSON.parse((await client.response()).body);
    expect(chunked).toMatchObject({ method: 'DELETE', body: '{"a":1}' });
    expect(chunked.headers['transfer-encoding']).toBe('chunked');
    expect(chunked.headers['content-length']).toBeUndefined();
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
  it('counts a chunked body on the way: past 1 MiB, 413 in the error format and the connection to the service is cut', async () => {
    const cutBefore = upstream.cutShort;
    const client = await RawClient.open(gateway.server.port);
    const piece = chunk(`"${'x'.repeat(64 * 1024 - 2)}"`);
    client.send(`PATCH /v1/users/echo HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${piece.repeat(17)}`);
    const res = await client.response();
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', traceId: expect.stringMatching(TRACE_ID) });
    await client.closedByPeer();
    await upstream.until(() => upstream.cutShort > cutBefore);
  });
});

describe('slow bodies and floods', () => {
  const slowRequest = (bearer: string, n: number) =>
    `PATCH /v1/users/echo?slow=${n} HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`;

  it('cuts a body that stalls with 408 in the error format and destroys the connection to the service', async () => {
    const cutBefore = upstream.cutShort;
    const client = await RawClient.open(gateway.server.port);
    client.send(slowRequest(token, 0));
    const res = await client.response();
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'REQUEST_TIMEOUT', traceId: expect.stringMatching(TRACE_ID), errors: [] });
    await client.closedByPeer();
    await upstream.until(() => upstream.cutShort > cutBefore);
    expect((await call('PATCH', '/v1/users/echo', { token, body: { after: true } })).body.body).toBe('{"after":true}');
  });

  it('survives more slow bodies than the pool has connections: /healthz and other calls answer during and after', async () => {
    const flooded = await startGateway(upstream.server.url, { REQUEST_TIMEOUT_MS: '3000' });
    const customers = await Promise.all(Array.from({ length: 10 }, () => tokenFor(JWT_SECRET)));
    const floodedCall = apiClient(() => flooded.server.url);
    const slowSeen = () => upstream.seen.filter((line) => line.startsWith('PATCH /users/echo?slow=')).length;
    const seenBefore = slowSeen();
    try {
      const clients: RawClient[] = [];
      for (let i = 0; i < 520; i++) clients.push((await RawClient.open(flooded.server.port)).send(slowRequest(customers[i % 10].token, i)));
      // 512 hold every pooled connection to the service; the rest wait for one.
      await upstream.until(() => slowSeen() - seenBefore >= 512);
      // Queued behind them with its body complete (this one used to crash the process once it got a connection).
      const queued = floodedCall('PATCH', '/v1/users/echo?client=queued', { token, body: { queued: true } });
      expect((await fetch(`${flooded.server.url}/healthz`)).status).toBe(200);
      expect((await floodedCall('GET', '/v1/products', { token })).status).toBe(200);
      const answers = await Promise.all(clients.map((client) => client.response()));
      expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([408]));
      expect([200, 504]).toContain((await queued).status);
      expect((await fetch(`${flooded.server.url}/healthz`)).status).toBe(200);
      expect((await floodedCall('PATCH', '/v1/users/echo?client=after', { token, body: { after: true } })).body.path).toBe('/users/echo?client=after');
      clients.forEach((client) => client.close());
    } finally {
      await flooded.stop();
    }
  });

  it('bounds in-flight requests per caller: the excess answers 429 RATE_LIMITED with Retry-After', async () => {
    const bounded = await startGateway(upstream.server.url, { MAX_IN_FLIGHT_PER_CALLER: '3' });
    const boundedCall = apiClient(() => bounded.server.url);
    const greedy = await tokenFor(JWT_SECRET);
    const cutBefore = upstream.cutShort;
    try {
      const clients = await Promise.all([1, 2, 3].map(async (n) => (await RawClient.open(bounded.server.port)).send(slowRequest(greedy.token, n))));
      await upstream.until(() => upstream.seen.filter((line) => /^PATCH \/users\/echo\?slow=[123]$/.test(line)).length >= 3);
      const refused = await boundedCall('GET', '/v1/users/echo', { token: greedy.token });
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', traceId: expect.stringMatching(TRACE_ID), errors: [] });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await boundedCall('GET', '/v1/users/echo', { token })).status).toBe(200); // another caller
      clients.forEach((client) => client.close());
      await upstream.until(() => upstream.cutShort >= cutBefore + 3);
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
      const clients = await Promise.all(customers.map(async (customer, n) => (await RawClient.open(bounded.server.port)).send(slowRequest(customer.token, 10 + n))));
      await upstream.until(() => upstream.seen.filter((line) => /^PATCH \/users\/echo\?slow=1[01]$/.test(line)).length >= 2);
      const refused = await boundedCall('GET', '/v1/users/echo', { token });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', traceId: expect.stringMatching(TRACE_ID), errors: [] });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await boundedCall('GET', '/v1/products', { token })).status).toBe(200);
      clients.forEach((client) => client.close());
    } finally {
      await bounded.stop();
    }
  });
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

describe('client input is a 4xx, never a 5xx', () => {
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
    } finally {
      await down.stop();
    }
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After when the service drops the connection before answering', async () => {
    const res = await call('GET', '/v1/users/reset', { token });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'SERVICE_UNAVAILABLE', errors: [] });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
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
});
