// inOrder: several steps as one express layer, with express's own rules for each step (what the
// gateway's and every service's pipeline rely on once their steps are grouped).
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import { inOrder } from './in-order';
import { listen, type Listening } from './listen';

let server: Listening;
const seen: string[] = [];

/** A step that notes its name and goes on. */
const step =
  (name: string): RequestHandler =>
  (_req, _res, next) => {
    seen.push(name);
    next();
  };

beforeAll(async () => {
  const app = express();
  app.use(
    inOrder([
      step('first'),
      (req, _res, next) => (req.path === '/passed-error' ? next(new Error('passed')) : next()),
      (req, _res, next) => {
        if (req.path === '/thrown') throw new Error('thrown');
        if (req.path === '/rejected') return Promise.reject(new Error('rejected'));
        if (req.path === '/rejected-empty') return Promise.reject(undefined);
        next();
      },
      async (req, res, next) => {
        await new Promise((resolve) => setImmediate(resolve));
        if (req.path === '/answered') return void res.json({ answeredBy: 'async step', seen });
        next();
      },
      step('last'),
    ]),
  );
  app.use((_req, res) => void res.json({ answeredBy: 'the next layer', seen }));
  const renderError: ErrorRequestHandler = (error: Error | undefined, _req, res, _next) => void res.status(500).json({ error: error?.message, seen });
  app.use(renderError);
  server = await listen(app, 0, '127.0.0.1');
});

afterAll(() => server.close());

const get = async (path: string) => {
  seen.length = 0;
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, body: (await res.json()) as { answeredBy?: string; error?: string; seen: string[] } };
};

describe('inOrder', () => {
  it('runs every step in order, then the next express layer', async () => {
    expect(await get('/through')).toEqual({ status: 200, body: { answeredBy: 'the next layer', seen: ['first', 'last'] } });
  });

  it('stops where a step answers', async () => {
    expect(await get('/answered')).toEqual({ status: 200, body: { answeredBy: 'async step', seen: ['first'] } });
  });

  it('hands an error passed to next to the error middleware, skipping the steps after it', async () => {
    expect(await get('/passed-error')).toEqual({ status: 500, body: { error: 'passed', seen: ['first'] } });
  });

  it('hands a thrown error and a rejected promise to the error middleware', async () => {
    expect(await get('/thrown')).toEqual({ status: 500, body: { error: 'thrown', seen: ['first'] } });
    expect(await get('/rejected')).toEqual({ status: 500, body: { error: 'rejected', seen: ['first'] } });
    expect(await get('/rejected-empty')).toEqual({ status: 500, body: { error: 'Rejected promise', seen: ['first'] } });
  });
});
