// The stock-level routes name the parameter at fault from the field the use case names, whatever
// its message says: rewording a message cannot move a field error to another parameter.
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorHandler, Invalid } from '@platform/errors';
import { stockLevelRoutes } from './routes';
import type { StockService } from './service';

let server: Server;
let url: string;
let refusal: Invalid;

beforeAll(async () => {
  const stock = { levels: async () => Promise.reject(refusal) } as unknown as StockService;
  const app = express();
  // A signed-in caller, as the app's token check leaves it.
  app.use((_req, res, next) => {
    res.locals.principal = { userId: 'routes-test', role: 'customer', expiresAt: Math.floor(Date.now() / 1000) + 60 };
    next();
  });
  app.use(stockLevelRoutes(stock, 'routes-test-cursor-secret').withToken);
  app.use(errorHandler);
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

it.each([
  ['a message that names another field', 'request_id must not contain control characters'],
  ['a message that names none', 'that is not a SKU'],
])('answers the sku parameter for the use case\'s skus[0], with %s', async (_case, message) => {
  refusal = new Invalid(message, [{ field: 'skus[0]', code: 'INVALID_FORMAT', message }]);
  const res = await fetch(`${url}/stock-levels?sku=A`);
  expect([res.status, await res.json()]).toEqual([422, expect.objectContaining({ code: 'VALIDATION_FAILED', message, errors: [{ field: 'sku', code: 'INVALID_FORMAT', message }] })]);
});
