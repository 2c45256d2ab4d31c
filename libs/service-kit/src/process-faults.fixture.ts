// A service that faults on demand, run as its own process by process-faults.test.ts
// (through tools/ts-run.mjs): the life cycle is runService's, as for every app.
import { EventEmitter } from 'node:events';
import express from 'express';
import { configOrExit, loadConfig } from './config';
import { requestContext } from './request-context';
import { runService } from './run-service';

runService({
  name: 'faulty-service',
  config: { ...configOrExit('faulty-service', () => loadConfig({})), PORT: Number(process.env.FIXTURE_PORT ?? 0) },
  async build() {
    const app = express();
    app.use(requestContext(5_000));
    app.get('/alive', (_req, res) => void res.json({ status: 'ok' }));
    // A socket-level fault nobody listens for, in the work of this request.
    app.get('/socket-fault', () => {
      setImmediate(() => new EventEmitter().emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })));
    });
    // A bug: a TypeError thrown where no handler sees it.
    app.get('/bug', () => {
      setImmediate(() => (JSON.parse('{}') as { missing: () => void }).missing());
    });
    return { app };
  },
});
