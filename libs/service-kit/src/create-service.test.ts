// createService: the stages in order, the service's parts in their places (what every service's
// app.ts relies on).
import { once } from 'node:events';
import { connect } from 'node:net';
import { Router, type ErrorRequestHandler } from 'express';
import { issueAccessToken, TokenVerifier } from '@platform/auth';
import { ApiError } from '@platform/errors';
import { createService } from './create-service';
import { createLogger } from './logger';
import { Health } from './health';
import { listen, type Listening } from './listen';
import { createMetrics } from './metrics';

const SECRET = 'create-service-test-secret-0123456789abcdef';
let server: Listening;

beforeAll(async () => {
  const app = createService({
    logger: createLogger('create-service-test', 'silent'),
    health: new Health(),
    metrics: createMetrics('create-service-test'),
    requestTimeoutMs: 10_000,
    graphql: (_req, res) => void res.json({ data: { served: 'graphql' } }),
    internal: [{ path: '/internal', handlers: [Router().get('/ping', (_req, res) => void res.json({ internal: true }))] }],
    verifier: new TokenVerifier([SECRET]),
    resources: [
      {
        withoutToken: Router().post('/tokens', (req, res) => void res.status(201).json({ received: req.body })).get('/query', (req, res) => void res.json(req.query)),
        withToken: Router()
          .get('/things', (_req, res) => void res.json({ principal: res.locals.principal?.userId }))
          .get('/broken', () => {
            throw new Error('database unreachable');
          }),
      },
    ],
    outages: [((error, _req, _res, next) => next(error instanceof Error && error.message === 'database unreachable' ? new ApiError('SERVICE_UNAVAILABLE', 'Retry shortly.', { headers: { 'Retry-After': '2' } }) : error)) as ErrorRequestHandler],
  });
  server = await listen(app, 0, '127.0.0.1');
});

afterAll(() => server.close());

const call = (method: string, path: string, init: { token?: string; body?: string; headers?: Record<string, string> } = {}) =>
  fetch(`${server.url}${path}`, { method, body: init.body, headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers } });

describe('createService', () => {
  it('answers health, metrics, GraphQL and internal routes before the token check, with the request id', async () => {
    const health = await call('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(health.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    expect((await call('GET', '/metrics')).status).toBe(200);
    expect(await (await call('POST', '/graphql', { body: '{"query":"{ x }"}' })).json()).toEqual({ data: { served: 'graphql' } });
    expect(await (await call('GET', '/internal/ping')).json()).toEqual({ internal: true });
  });

  it('parses JSON for the calls without a token, and refuses what the body stage refuses first', async () => {
    const signIn = await call('POST', '/tokens', { body: '{"email":"a@example.com"}' });
    expect(signIn.status).toBe(201);
    expect(await signIn.json()).toEqual({ received: { email: 'a@example.com' } });
    expect((await call('POST', '/tokens', { body: '{"email":', token: undefined })).status).toBe(400);
    expect((await call('GET', '/things', { headers: { accept: 'text/html' } })).status).toBe(406);
  });

  it('needs a token for every resource, then serves it; 404 past the resources', async () => {
    expect((await call('GET', '/things')).status).toBe(401);
    const { accessToken } = await issueAccessToken(SECRET, { userId: 'user-1', role: 'customer' });
    expect(await (await call('GET', '/things', { token: accessToken })).json()).toEqual({ principal: 'user-1' });
    const missing = await call('GET', '/nothing-here', { token: accessToken });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('NOT_FOUND');
  });

  it("runs the service's outages before the one error renderer", async () => {
    const { accessToken } = await issueAccessToken(SECRET, { userId: 'user-1', role: 'customer' });
    const broken = await call('GET', '/broken', { token: accessToken });
    expect(broken.status).toBe(503);
    expect(broken.headers.get('retry-after')).toBe('2');
    expect(((await broken.json()) as { code: string }).code).toBe('SERVICE_UNAVAILABLE');
  });
});

/** Sends `target` on a raw socket, exactly as written (no client normalises it), and reads the whole answer. */
async function rawGet(target: string): Promise<{ status: number; body: unknown }> {
  const socket = connect(server.port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'close');
  const [head, body] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
}

describe('the query string', () => {
  it('is read as node reads it: repeated names a list, + a space, escapes decoded; none is no parameter', async () => {
    expect(await rawGet('/query?q=a+b%20c&size=1&size=2&empty')).toEqual({ status: 200, body: { q: 'a b c', size: ['1', '2'], empty: '' } });
    expect(await rawGet('/query')).toEqual({ status: 200, body: {} });
  });

  it('with a malformed %-escape, in a value or a name, is 400 VALIDATION_FAILED naming each parameter', async () => {
    const res = await rawGet('/query?q=%E0%A4%A&size=1&sort=%zz&%FFname=x');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'VALIDATION_FAILED',
      message: expect.any(String),
      traceId: expect.stringMatching(/^[\da-f]{32}$/),
      errors: [
        { field: 'q', code: 'INVALID_FORMAT', message: 'q has a malformed %-encoding.' },
        { field: 'sort', code: 'INVALID_FORMAT', message: 'sort has a malformed %-encoding.' },
        { field: '%FFname', code: 'INVALID_FORMAT', message: '%FFname has a malformed %-encoding.' },
      ],
    });
  });
});
