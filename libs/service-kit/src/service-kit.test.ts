import express from 'express';
import { updateAtVersion } from './conditional';
import { loadConfig, portSetting } from './config';
import { createLogger } from './logger';
import { createStopper, stoppableHttpServer } from './graceful-stop';
import { Health } from './health';
import { listen } from './listen';
import { currentContext, requestContext, traceIdFrom } from './request-context';

describe('loadConfig', () => {
  it('applies defaults and warns loudly when the development JWT secret stands in', () => {
    const config = loadConfig({ PORT: portSetting(3001) }, {});
    expect(config.PORT).toBe(3001);
    expect(config.NODE_ENV).toBe('development');
    expect(config.warnings.join(' ')).toMatch(/DEVELOPMENT SECRET/);
  });

  it('refuses to start in production without JWT_SECRET', () => {
    expect(() => loadConfig({}, { NODE_ENV: 'production' })).toThrow(/JWT_SECRET: required/);
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

describe('graceful stop', () => {
  it('fails readiness, lets the in-flight request finish, then closes', async () => {
    const health = new Health();
    const app = express();
    app.use(requestContext(1000));
    app.use(health.router());
    let release: () => void = () => undefined;
    app.get('/slow', async (_req, res) => {
      await new Promise<void>((resolve) => (release = resolve));
      res.json({ traceId: currentContext()?.traceId });
    });
    const server = await listen(app, 0, '127.0.0.1');
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    const inFlight = fetch(`${server.url}/slow`, { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
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
});
