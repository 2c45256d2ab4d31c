// The one JSON-body mechanism as clients meet it: a service's jsonBody() and the gateway's
// check without parsing, each behind the error handler every app ends with.
import { gzipSync } from 'node:zlib';
import express from 'express';
import { errorHandler } from '@platform/errors';
import { jsonBody, requireJsonBody } from './json-body';
import { listen, type Listening } from './listen';

let service: Listening;
let proxy: Listening;

beforeAll(async () => {
  const serviceApp = express();
  serviceApp.use(jsonBody());
  serviceApp.post('/things', (req, res) => void res.status(201).json({ received: req.body ?? null }));
  serviceApp.use(errorHandler);
  service = await listen(serviceApp, 0, '127.0.0.1');

  const proxyApp = express();
  proxyApp.use(requireJsonBody({ refuseContentCoding: true }));
  // What a proxy forwards: the bytes as they came, never parsed.
  proxyApp.post('/things', express.raw({ type: () => true }), (req, res) => void res.status(201).json({ bytes: Buffer.isBuffer(req.body) ? req.body.length : 0 }));
  proxyApp.use(errorHandler);
  proxy = await listen(proxyApp, 0, '127.0.0.1');
});

afterAll(async () => {
  await service.close();
  await proxy.close();
});

async function post(url: string, body: string | Buffer, headers: Record<string, string>) {
  const res = await fetch(`${url}/things`, { method: 'POST', headers, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("a service's JSON body (jsonBody)", () => {
  it('parses a JSON body of any JSON media type, a bare value too', async () => {
    expect(await post(service.url, '{"a":1}', { 'content-type': 'application/json; charset=utf-8' })).toEqual({ status: 201, body: { received: { a: 1 } } });
    expect(await post(service.url, '{"a":2}', { 'content-type': 'application/merge-patch+json' })).toEqual({ status: 201, body: { received: { a: 2 } } });
    expect(await post(service.url, '"text"', { 'content-type': 'application/json' })).toEqual({ status: 201, body: { received: 'text' } });
  });

  it('answers 400 MALFORMED_JSON for unreadable JSON', async () => {
    const res = await post(service.url, '{"name": ', { 'content-type': 'application/json' });
    expect(res).toMatchObject({ status: 400, body: { code: 'MALFORMED_JSON', message: 'The request body is not valid JSON.' } });
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over 1 MiB', async () => {
    const res = await post(service.url, JSON.stringify({ blob: 'x'.repeat(1024 * 1024 + 10) }), { 'content-type': 'application/json' });
    expect(res).toMatchObject({ status: 413, body: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than 1048576 bytes.' } });
  });

  it('answers 415 UNSUPPORTED_MEDIA_TYPE for a body that is not JSON', async () => {
    const res = await post(service.url, 'hello', { 'content-type': 'text/plain' });
    expect(res).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request body as application/json.' } });
  });

  it('answers 415 for a charset other than UTF-8', async () => {
    const res = await post(service.url, '{"a":1}', { 'content-type': 'application/json; charset=latin1' });
    expect(res).toMatchObject({ status: 415, body: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body charset is not supported; send UTF-8.' } });
  });

  it('decodes a gzip body, answers 400 for a gzip body that is not gzip, and 415 for an unknown content coding', async () => {
    expect(await post(service.url, gzipSync('{"a":3}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' })).toEqual({ status: 201, body: { received: { a: 3 } } });
    expect(await post(service.url, '{"a":1}', { 'content-type': 'application/json', 'content-encoding': 'gzip' })).toMatchObject({ status: 400, body: { code: 'MALFORMED_REQUEST' } });
    expect(await post(service.url, '{"a":1}', { 'content-type': 'application/json', 'content-encoding': 'x-unknown' })).toMatchObject({
      status: 415,
      body: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body encoding is not supported.' },
    });
  });
});

describe('a proxy that forwards bodies as they came (requireJsonBody with refuseContentCoding)', () => {
  it('lets a JSON body through unparsed, and a request without a body whatever its content type', async () => {
    expect(await post(proxy.url, '{"a":1}', { 'content-type': 'application/json' })).toEqual({ status: 201, body: { bytes: 7 } });
    expect(await post(proxy.url, '', { 'content-type': 'text/plain' })).toEqual({ status: 201, body: { bytes: 0 } });
  });

  it('answers 415 for a body that is not JSON, and for a body with a content coding it would not decode', async () => {
    expect(await post(proxy.url, 'hello', { 'content-type': 'text/plain' })).toMatchObject({ status: 415, body: { message: 'Send the request body as application/json.' } });
    expect(await post(proxy.url, gzipSync('{"a":1}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' })).toMatchObject({
      status: 415,
      body: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the request body without a content coding.' },
    });
    expect(await post(proxy.url, '{"a":1}', { 'content-type': 'application/json', 'content-encoding': 'identity' })).toEqual({ status: 201, body: { bytes: 7 } });
  });
});
