import { Agent, get, request } from 'node:http';
import { connect } from 'node:net';
import express from 'express';
import { ApiError } from '@platform/errors';
import { updateAtVersion } from './conditional';
import { demoDataSetting, loadConfig, portSetting, seedsDemoData } from './config';
import { createLogger } from './logger';
import { createStopper, stoppableHttpServer } from './graceful-stop';
import { Health } from './health';
import { listen, MAX_HEADER_BYTES, MAX_HEADER_FIELDS } from './listen';
import { currentContext, outgoingTraceparent, requestContext, traceIdFrom } from './request-context';

describe('loadConfig', () => {
  it('applies defaults and warns loudly when the development JWT secret stands in', () => {
    const config = loadConfig({ PORT: portSetting(3001) }, {});
    expect(config.PORT).toBe(3001);
    expect(config.NODE_ENV).toBe('development');
    expect(config.warnings.join(' ')).toMatch(/DEVELOPMENT SECRET/);
  });

  it('seeds demo data into an empty database everywhere but production, unless DEMO_DATA says otherwise', () => {
    const seeds = (env: NodeJS.ProcessEnv) => seedsDemoData(loadConfig({ DEMO_DATA: demoDataSetting }, { JWT_SECRET: 'x'.repeat(32), ...env }));
    expect([seeds({}), seeds({ NODE_ENV: 'test' }), seeds({ NODE_ENV: 'production' })]).toEqual([true, true, false]);
    expect([seeds({ NODE_ENV: 'production', DEMO_DATA: 'true' }), seeds({ DEMO_DATA: 'false' })]).toEqual([true, false]);
    expect(() => loadConfig({ DEMO_DATA: demoDataSetting }, { DEMO_DATA: 'yes' })).toThrow(/DEMO_DATA/);
  });

  it('refuses to start in production without JWT_SECRET', () => {
    expect(() => loadConfig({}, { NODE_ENV: 'production' })).toThrow(/JWT_SECRET: required/);
  });

  it('listens on every interface unless LISTEN_HOST names one, and refuses a LISTEN_HOST that is not an address', () => {
    expect(loadConfig({}, {}).LISTEN_HOST).toBe('0.0.0.0');
    expect(loadConfig({}, { LISTEN_HOST: '127.0.0.1' }).LISTEN_HOST).toBe('127.0.0.1');
    expect(loadConfig({}, { LISTEN_HOST: '::1' }).LISTEN_HOST).toBe('::1');
    expect(() => loadConfig({}, { LISTEN_HOST: 'everywhere' })).toThrow(/LISTEN_HOST: LISTEN_HOST must be an IP address/);
  });

  it('lists every bad setting at once', () => {
    expect(() => loadConfig({ PORT: portSetting(1) }, { PORT: 'abc', NODE_ENV: 'staging' })).toThrow(/PORT[\s\S]*NODE_ENV|NODE_ENV[\s\S]*PORT/);
  });
});

describe('trace ids', () => {
  it('keeps the trace id of a valid traceparent and makes one otherwise', () => {
    expect(traceIdFrom('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traceIdFrom('garbage')).toMatch(/^[\da-f]{32}$/);
    expect(traceIdFrom('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).not.toBe('00000000000000000000000000000000');
  });

  it("ignores a traceparent OpenTelemetry's propagator ignores, so a hop without tracing and one with it agree on the trace", () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    // W3C Trace Context §3.2: version ff is invalid, hex is lowercase, no id is all zeros, and version 00 has four fields.
    for (const invalid of [`ff-${traceId}-00f067aa0ba902b7-01`, `00-${traceId.toUpperCase()}-00f067aa0ba902b7-01`, `00-${traceId}-0000000000000000-01`, `00-${traceId}-00f067aa0ba902b7-01-extra`]) {
      expect([invalid, traceIdFrom(invalid)]).not.toEqual([invalid, traceId]);
    }
    // A later version may carry more fields: its trace is kept, as the propagator keeps it.
    const later = `01-${traceId}-00f067aa0ba902b7-01-extra`;
    expect(traceIdFrom(later)).toBe(traceId);
  });

  it("gives outgoing calls the caller's traceparent, or one that starts the request's trace (no tracing SDK running)", async () => {
    const app = express();
    app.use(requestContext(1000));
    app.get('/', (_req, res) => void res.json({ traceId: currentContext()?.traceId, outgoing: outgoingTraceparent() }));
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const continued = await (await fetch(server.url, { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } })).json();
      expect(continued).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', outgoing: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
      // A later version's trace continues, passed on in version 00 without the fields this hop does not know.
      const later = await (await fetch(server.url, { headers: { traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra' } })).json();
      expect(later).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', outgoing: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
      for (const traceparent of [undefined, 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01']) {
        const started = (await (await fetch(server.url, { headers: traceparent ? { traceparent } : {} })).json()) as { traceId: string; outgoing: string };
        expect(started.outgoing).toMatch(new RegExp(`^00-${started.traceId}-[\\da-f]{16}-00$`));
      }
    } finally {
      await server.close();
    }
    expect(outgoingTraceparent()).toBeUndefined(); // outside a request
  });
});

describe('listen', () => {
  it('serves an express app on requests and responses born with its prototypes, so express has none to swap', async () => {
    const app = express();
    app.use(express.json());
    app.post('/echo/:name', (req, res) => void res.status(201).set('X-Path', req.path).json({ name: req.params.name, body: req.body, ip: req.ip }));
    const server = await listen(app, 0, '127.0.0.1');
    const seenBeforeExpress: boolean[] = [];
    server.server.prependListener('request', (req, res) => seenBeforeExpress.push(Object.getPrototypeOf(req) === app.request && Object.getPrototypeOf(res) === app.response));
    try {
      const response = await fetch(`${server.url}/echo/ada?x=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ n: 1 }) });
      expect(response.status).toBe(201);
      expect(response.headers.get('x-path')).toBe('/echo/ada');
      expect(await response.json()).toEqual({ name: 'ada', body: { n: 1 }, ip: '127.0.0.1' });
      expect(seenBeforeExpress).toEqual([true]);
    } finally {
      await server.close();
    }
  });

  it('serves a plain request listener as Node would', async () => {
    const server = await listen((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('plain'), 0, '127.0.0.1');
    try {
      const response = await fetch(server.url);
      expect([response.status, await response.text()]).toEqual([200, 'plain']);
    } finally {
      await server.close();
    }
  });
});

/** Sends raw bytes and returns everything the server answers until it closes the connection. */
async function rawExchange(port: number, request: string): Promise<{ head: string; body: string }> {
  const socket = connect(port, '127.0.0.1', () => socket.write(request));
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await new Promise((resolve) => socket.once('close', resolve));
  const [head, body = ''] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
  return { head, body };
}

describe('listen: what every app answers before its own code runs', () => {
  const app = express();
  app.use(requestContext(1000));
  app.use(express.json());
  app.post('/things', (req, res) => void res.status(201).json(req.body));
  let server: Awaited<ReturnType<typeof listen>>;

  beforeAll(async () => {
    server = await listen(app, 0, '127.0.0.1', { requestTimeoutMs: 300 });
  });

  afterAll(() => server.close());

  it.each([
    ['Content-Length beside Transfer-Encoding', 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'MALFORMED_REQUEST'],
    ['two Content-Length headers', 'Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 400, 'MALFORMED_REQUEST'],
    ['a Transfer-Encoding that does not end in chunked', 'Transfer-Encoding: chunked, identity\r\n\r\n{}', 400, 'MALFORMED_REQUEST'],
    ['a header line folded over two lines', 'X-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\n{}', 400, 'MALFORMED_REQUEST'],
    ['headers larger than the parser reads (64 KiB)', `X-Padding: ${'a'.repeat(70_000)}\r\nContent-Length: 2\r\n\r\n{}`, 431, 'REQUEST_HEADERS_TOO_LARGE'],
  ])('refuses %s in the error format, with nosniff, and closes the connection', async (_name, rest, status, code) => {
    const { head, body } = await rawExchange(server.port, `POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${rest}`);
    expect(head.split('\r\n')[0]).toBe(`HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : 'Request Header Fields Too Large'}`);
    expect(head).toMatch(/\r\ncontent-type: application\/json/i);
    expect(head).toMatch(/\r\nx-content-type-options: nosniff\r\n/i);
    expect(head).toMatch(/\r\nconnection: close(\r\n|$)/i);
    expect(JSON.parse(body)).toEqual({ code, message: expect.any(String), traceId: expect.stringMatching(/^[\da-f]{32}$/), errors: [] });
  });

  it('tells a long URL (414 URI_TOO_LONG) from large headers (431), each in the error format; a long URL with a few headers is read', async () => {
    const exchange = async (line: string, headers = '') => {
      const { head, body } = await rawExchange(server.port, `${line}\r\nHost: x\r\nConnection: close\r\n${headers}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`);
      return [head.split('\r\n')[0], JSON.parse(body).code ?? JSON.parse(body)];
    };
    expect(await exchange(`POST /things?q=${'a'.repeat(20_000)} HTTP/1.1`)).toEqual(['HTTP/1.1 414 URI Too Long', 'URI_TOO_LONG']);
    expect(await exchange('POST /things HTTP/1.1', `X-Padding: ${'a'.repeat(20_000)}\r\n`)).toEqual(['HTTP/1.1 431 Request Header Fields Too Large', 'REQUEST_HEADERS_TOO_LARGE']);
    // A long URL too long for the parser's bound on everything (64 KiB) is as much too large headers: the parser cannot tell.
    expect(await exchange(`POST /things?q=${'a'.repeat(70_000)} HTTP/1.1`)).toEqual(['HTTP/1.1 431 Request Header Fields Too Large', 'REQUEST_HEADERS_TOO_LARGE']);
    // 10 KB of URL and 10 KB of headers: each within its bound, so read (Node's one 16 KiB bound refused it).
    expect(await exchange(`POST /things?q=${'a'.repeat(10_000)} HTTP/1.1`, `X-Padding: ${'a'.repeat(10_000)}\r\n`)).toEqual(['HTTP/1.1 201 Created', {}]);
  });

  it('counts header bytes as sent, not characters: non-ASCII bytes up to 16 KiB of headers are read, one byte more is 431', async () => {
    // Every field counts `name: value` and its CRLF; the padding's value is two-byte UTF-8 characters (é is C3 A9) and one ASCII byte to reach an exact count.
    const fixed = ['Host: x', 'Connection: close', 'Content-Type: application/json', 'Content-Length: 2'].reduce((bytes, line) => bytes + line.length + 2, 0);
    const exchange = async (headerBytes: number) => {
      const valueBytes = headerBytes - fixed - 'X-Padding: '.length - 2;
      const value = `${'é'.repeat(Math.floor(valueBytes / 2))}${valueBytes % 2 ? 'a' : ''}`;
      expect(Buffer.byteLength(value)).toBe(valueBytes);
      const { head } = await rawExchange(server.port, `POST /things HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\nX-Padding: ${value}\r\n\r\n{}`);
      return head.split('\r\n')[0];
    };
    expect(await exchange(MAX_HEADER_BYTES)).toBe('HTTP/1.1 201 Created');
    expect(await exchange(MAX_HEADER_BYTES + 1)).toBe('HTTP/1.1 431 Request Header Fields Too Large');
  });

  it('refuses more than MAX_HEADER_FIELDS header fields with 431 rather than reading the request without the ones past a count', async () => {
    // Short fields, so that the count is reached well within 16 KiB of header bytes.
    const exchange = async (fields: number) => {
      const padding = Array.from({ length: fields - 4 }, (_, i) => `x${i}:\r\n`).join('');
      const { head, body } = await rawExchange(server.port, `POST /things HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n${padding}Content-Length: 7\r\n\r\n{"a":1}`);
      return [head.split('\r\n')[0], JSON.parse(body)];
    };
    // The last field (Content-Length) is read at the bound: without it there would be no body.
    expect(await exchange(MAX_HEADER_FIELDS)).toEqual(['HTTP/1.1 201 Created', { a: 1 }]);
    expect(await exchange(MAX_HEADER_FIELDS + 1)).toEqual(['HTTP/1.1 431 Request Header Fields Too Large', expect.objectContaining({ code: 'REQUEST_HEADERS_TOO_LARGE' })]);
  });

  it('answers 408 in the error format when a body stalls past requestTimeoutMs, and closes the connection', async () => {
    const { head, body } = await rawExchange(server.port, 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"a":');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(body)).toMatchObject({ code: 'REQUEST_TIMEOUT', errors: [] });
  });

  it('answers Expect: 100-continue with 413 before the body is sent when it is announced over 1 MiB, and with 100 Continue otherwise', async () => {
    const large = await rawExchange(server.port, 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\nExpect: 100-continue\r\n\r\n');
    expect(large.head.split('\r\n')[0]).toBe('HTTP/1.1 413 Payload Too Large');
    expect(JSON.parse(large.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', errors: [] });
    const small = await rawExchange(server.port, 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 7\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n{"a":1}');
    expect(small.head).toBe('HTTP/1.1 100 Continue');
  });

  it('sends X-Content-Type-Options: nosniff on every response, errors included', async () => {
    const created = await fetch(`${server.url}/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    const missing = await fetch(`${server.url}/nothing`);
    expect([created.status, created.headers.get('x-content-type-options')]).toEqual([201, 'nosniff']);
    expect([missing.status, missing.headers.get('x-content-type-options')]).toEqual([404, 'nosniff']);
  });
});

describe('graceful stop', () => {
  it('fails readiness, lets the in-flight request finish, then closes', async () => {
    const health = new Health();
    const app = express();
    app.use(requestContext(1000));
    app.use(health.router());
    let release: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const handling = new Promise<void>((resolve) => (arrived = resolve));
    app.get('/slow', async (_req, res) => {
      await new Promise<void>((resolve) => {
        release = resolve;
        arrived();
      });
      res.json({ traceId: currentContext()?.traceId });
    });
    const server = await listen(app, 0, '127.0.0.1');
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    const inFlight = fetch(`${server.url}/slow`, { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    await handling; // the request is in flight when the stop begins
    const stop = createStopper({ logger: createLogger('test', 'silent'), health, listeners: [stoppableHttpServer(server.server)], drainMs: 0, timeoutMs: 5000 });
    const stopped = stop();
    expect(health.isStopping).toBe(true);
    release();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(await response.json()).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
    await stopped;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it('drains a connection its client keeps busy: answers from the stop on close their connection, so the stop ends without its timeout and no request fails', async () => {
    const app = express();
    let received = 0;
    let thirdArrived: () => void = () => undefined;
    const third = new Promise<void>((resolve) => (thirdArrived = resolve));
    // A long poll's shape: each answer takes a moment, and the client asks again at once on the same connection.
    app.get('/poll', (_req, res) => {
      if (++received === 3) thirdArrived();
      setTimeout(() => res.json({ events: [] }), 30);
    });
    const server = await listen(app, 0, '127.0.0.1');
    // Made with the server, as runService does: it follows the connections from the first.
    const listener = stoppableHttpServer(server.server);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const seen: { status?: number; connection?: string; error?: string }[] = [];
    let polling = true;
    const poll = (): Promise<{ status?: number; connection?: string; error?: string }> =>
      new Promise((resolve) => {
        get(`${server.url}/poll`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
        }).on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code }));
      });
    const consumer = (async () => {
      while (polling) {
        const outcome = await poll();
        seen.push(outcome);
        // Refused: this replica is gone, as a consumer would find it, and it would try another.
        if (outcome.error) polling = false;
      }
    })();
    await third; // the stop begins while the third poll is in flight, on the connection the first two used
    // Timed out, the stop would cut the connection; a minute is beyond this test's own timeout.
    const stop = createStopper({ logger: createLogger('test', 'silent'), health: new Health(), listeners: [listener], drainMs: 0, timeoutMs: 60_000 });
    await stop();
    await consumer;
    agent.destroy();
    const answers = seen.filter((outcome) => outcome.status !== undefined);
    // Every request sent before the stop was answered in full; the one in flight when it began said `close`.
    expect(answers.map((outcome) => [outcome.status, outcome.connection])).toEqual([
      [200, 'keep-alive'],
      [200, 'keep-alive'],
      [200, 'close'],
    ]);
    // The next request found no one listening; nothing was reset halfway.
    expect(seen.at(-1)).toEqual({ error: 'ECONNREFUSED' });
  });

  it('keeps serving through the readiness drain, each answer closing its connection, so kept-alive clients move on before the listener closes', async () => {
    const health = new Health();
    const app = express();
    app.use(health.router());
    app.get('/ping', (_req, res) => res.json({ pong: true }));
    app.post('/ping', (req, res) => req.resume().on('end', () => res.json({ pong: true })));
    const server = await listen(app, 0, '127.0.0.1');
    const listener = stoppableHttpServer(server.server);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ask = (route: string) =>
      new Promise<[number | undefined, string | undefined]>((resolve, reject) => {
        get(`${server.url}${route}`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve([res.statusCode, res.headers.connection]));
        }).on('error', reject);
      });
    expect(await ask('/ping')).toEqual([200, 'keep-alive']);
    const stopped = createStopper({ logger: createLogger('test', 'silent'), health, listeners: [listener], drainMs: 1_000, timeoutMs: 60_000 })();
    // Within the drain: served, on a connection that then closes (each ask a new one).
    expect(await ask('/ping')).toEqual([200, 'close']);
    expect(await ask('/readyz')).toEqual([503, 'close']);
    // A body sent after 100 Continue: Node hands such a request over as checkContinue, not request.
    const continued = await new Promise<[number | undefined, string | undefined]>((resolve, reject) => {
      const req = request(`${server.url}/ping`, { method: 'POST', agent, headers: { expect: '100-continue', 'content-type': 'application/json', 'content-length': '2' } }, (res) => {
        res.resume();
        res.on('end', () => resolve([res.statusCode, res.headers.connection]));
      });
      req.on('continue', () => req.end('{}'));
      req.on('error', reject);
    });
    expect(continued).toEqual([200, 'close']);
    await stopped;
    agent.destroy();
  });

  it('reports not ready while a dependency check fails', async () => {
    const health = new Health().addCheck('database', async () => {
      throw new Error('down');
    });
    expect(await health.readiness()).toEqual({ ready: false, checks: { database: 'failing' } });
  });
});

describe('updateAtVersion', () => {


  it('writes at the current version and returns the result', async () => {
    await expect(updateAtVersion('user', 3, undefined, async (version) => ({ version: version + 1 }))).resolves.toEqual({ version: 4 });
    await expect(updateAtVersion('user', 3, 3, async () => 'ok')).resolves.toBe('ok');
  });

  it('answers 412 when If-Match names another version, without writing', async () => {
    const write = jest.fn();
    await expect(updateAtVersion('user', 3, 2, write)).rejects.toMatchObject({ status: 412, code: 'PRECONDITION_FAILED' });
    expect(write).not.toHaveBeenCalled();
  });

  it('answers 412 with If-Match, 409 without, when another write won meanwhile', async () => {
    await expect(updateAtVersion('user', 3, 3, async () => null)).rejects.toMatchObject({ status: 412 });
    await expect(updateAtVersion('product', 3, undefined, async () => null)).rejects.toMatchObject({ status: 409, code: 'CONFLICT', message: expect.stringContaining('product') });
  });

  it('lets the resource say what the winning write did, when the client sent no If-Match', async () => {
    const canceled = new ApiError('ORDER_ALREADY_CANCELED', 'The order is already canceled.');
    await expect(updateAtVersion('order', 3, undefined, async () => null, { explainLostRace: async () => canceled })).rejects.toBe(canceled);
    await expect(updateAtVersion('order', 3, undefined, async () => null, { explainLostRace: async () => undefined })).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });
    await expect(updateAtVersion('order', 3, 3, async () => null, { explainLostRace: async () => canceled })).rejects.toMatchObject({ status: 412 });
  });
});
