import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError } from './api-error';
import { errorHandler, methodNotAllowed, notFoundHandler, requireAcceptableResponse } from './express';

let server: Server;
let url: string;

beforeAll(async () => {
  const app = express();
  app.use((_req, res, next) => {
    res.locals.traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    next();
  });
  app.use(requireAcceptableResponse);
  // Public writes above an authentication-like middleware, reads below it, on the same path.
  const publicThings = express.Router();
  publicThings.post('/things', (_req, res) => {
    res.status(201).json({});
  });
  app.use(publicThings);
  app.use((req, _res, next) => next(req.path !== '/things' || req.headers.authorization ? undefined : new ApiError('UNAUTHENTICATED', 'A bearer token is required.')));
  const privateThings = express.Router();
  privateThings
    .route('/things')
    .get((_req, res) => {
      res.json({ items: [] });
    })
    .all(methodNotAllowed);
  app.use(privateThings);
  // A literal path before a parameter one that also matches it, as /orders/search before /orders/:id.
  const searchThings = express.Router();
  searchThings
    .route('/things/search')
    .post((_req, res) => {
      res.json({ items: [] });
    })
    .all(methodNotAllowed);
  app.use(searchThings);
  app
    .route('/things/:id')
    .get((req, res) => {
      res.json({ id: req.params.id });
    })
    .delete((_req, res) => {
      res.status(204).end();
    })
    .all(methodNotAllowed);
  app.get('/boom', () => {
    const error = new Error('relation "users" does not exist: SELECT * FROM users WHERE password_hash = $1');
    throw error;
  });
  app.get('/conflict', () => {
    throw new ApiError('ORDER_ALREADY_CANCELED', 'The order is already canceled.');
  });
  app.use(notFoundHandler);
  app.use(errorHandler);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('the error format', () => {
  it('renders an ApiError with code, message, traceId and an empty errors list', async () => {
    const res = await fetch(`${url}/conflict`);
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await res.json()) as { code: string }).toEqual({ code: 'ORDER_ALREADY_CANCELED', message: 'The order is already canceled.', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', errors: [] });
  });

  it('renders RFC 9457 problem+json when the client asks for it', async () => {
    const res = await fetch(`${url}/conflict`, { headers: { accept: 'application/problem+json' } });
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ status: 409, title: 'Order already canceled', detail: 'The order is already canceled.', instance: '/conflict', code: 'ORDER_ALREADY_CANCELED', errors: [] });
    expect(String(body.type)).toMatch(/order-already-canceled$/);
  });

  it('answers an unexpected error with a bare 500: no stack, no SQL, no message of the cause', async () => {
    const res = await fetch(`${url}/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text)).toMatchObject({ code: 'INTERNAL', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', errors: [] });
    expect(text).not.toMatch(/SELECT|password_hash|relation|at \w+ \(|\.ts:/);
  });

  it('answers 404 NOT_FOUND for an unknown path', async () => {
    const res = await fetch(`${url}/nowhere`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('NOT_FOUND');
  });

  it('answers 405 with Allow naming the methods of every route at the path, above and below authentication', async () => {
    const res = await fetch(`${url}/things`, { method: 'DELETE', headers: { authorization: 'Bearer any' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, POST, HEAD');
    expect(((await res.json()) as { code: string }).code).toBe('METHOD_NOT_ALLOWED');
  });

  it("answers 405 at a literal path with its own methods only, not those of a parameter route after it that never sees the path", async () => {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const res = await fetch(`${url}/things/search`, { method, headers: { authorization: 'Bearer any' } });
      expect({ method, status: res.status, allow: res.headers.get('allow') }).toEqual({ method, status: 405, allow: 'POST' });
    }
    const other = await fetch(`${url}/things/1`, { method: 'PUT', headers: { authorization: 'Bearer any' } });
    expect(other.headers.get('allow')).toBe('GET, DELETE, HEAD');
  });

  it('answers 406 when the client accepts no JSON', async () => {
    const res = await fetch(`${url}/things`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(406);
    expect(((await res.json()) as { code: string }).code).toBe('NOT_ACCEPTABLE');
  });

  it('answers 406 when the client refuses JSON with q=0, and serves JSON asked for with parameters or beside other types', async () => {
    const statusFor = async (accept: string) => ({ accept, status: (await fetch(`${url}/things`, { headers: { accept, authorization: 'Bearer any' } })).status });
    expect(await statusFor('application/json;q=0')).toEqual({ accept: 'application/json;q=0', status: 406 });
    expect(await statusFor('application/json; q=0, text/html')).toEqual({ accept: 'application/json; q=0, text/html', status: 406 });
    for (const accept of ['application/json', 'application/json; charset=utf-8', 'application/json, text/plain, */*', 'application/json;q=0.5']) expect(await statusFor(accept)).toEqual({ accept, status: 200 });
  });

  it('answers 406 when the client refuses JSON by name beside a wildcard or problem+json: a success would still be JSON', async () => {
    for (const accept of ['application/json;q=0, */*', '*/*, application/json;q=0', 'text/html, application/json; q=0, application/*', 'application/problem+json, application/json;q=0']) {
      const res = await fetch(`${url}/things`, { headers: { accept, authorization: 'Bearer any' } });
      expect({ accept, status: res.status, type: res.headers.get('content-type') }).toEqual({ accept, status: 406, type: expect.not.stringMatching(/^application\/json/) });
    }
    // Errors alone in problem+json, JSON not refused: served as before.
    expect((await fetch(`${url}/things`, { headers: { accept: 'application/problem+json', authorization: 'Bearer any' } })).status).toBe(200);
  });
});

describe('requests express cannot read', () => {
  it('answer 400 MALFORMED_REQUEST for a path parameter with a broken %-encoding, not 500', async () => {
    const res = await fetch(`${url}/things/%E0%A4%A`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'MALFORMED_REQUEST', errors: [] });
  });
});
