// The one JSON-body mechanism as clients meet it: a service's jsonBody() and the gateway's
// check without parsing, each behind the error handler every app ends with.
import { gzipSync } from 'node:zlib';
import express from 'express';
import { ApiError, errorHandler } from '@platform/errors';
import { jsonBody, MAX_JSON_NESTING, nestsDeeperThan, readForwardedJson, requireJsonBody, requireReadableBody } from './json-body';
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
  await service?.close();
  await proxy?.close();
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

  it('answers 400 MALFORMED_JSON for bytes that are not text in their charset, instead of reading them as U+FFFD', async () => {
    const refused = { status: 400, body: { code: 'MALFORMED_JSON', message: expect.stringMatching(/not valid text in its charset/) } };
    expect(await post(service.url, Buffer.from('{"name":"\xff\xfe"}', 'latin1'), { 'content-type': 'application/json' })).toMatchObject(refused);
    // A lone surrogate half in UTF-16.
    expect(await post(service.url, Buffer.concat([Buffer.from('{"a":"', 'utf16le'), Buffer.from([0x00, 0xd8]), Buffer.from('"}', 'utf16le')]), { 'content-type': 'application/json; charset=utf-16le' })).toMatchObject(refused);
    expect(await post(service.url, Buffer.from('{"name":"Zoë 🙂"}'), { 'content-type': 'application/json' })).toEqual({ status: 201, body: { received: { name: 'Zoë 🙂' } } });
  });

  it('answers 400 MALFORMED_JSON for an escaped lone surrogate, instead of storing it as U+FFFD, and reads escaped pairs', async () => {
    const refused = { status: 400, body: { code: 'MALFORMED_JSON', message: expect.stringMatching(/lone UTF-16 surrogate/) } };
    for (const text of ['"\\ud800"', '"\\uDFFF"', '"\\ud800x"', '"\\ud800\\n"', '"\\ud83d\\ud83d"', '"\\ude42\\ud83d"', '"a\\\\\\ud800"', '["\\ud800"]']) {
      const body = `{"name":${text}}`;
      expect({ body, res: await post(service.url, body, { 'content-type': 'application/json' }) }).toMatchObject({ body, res: refused });
      expect({ body, read: readForwardedJson(Buffer.from(body), 'application/json') }).toEqual({ body, read: { refusal: expect.objectContaining({ status: 400, code: 'MALFORMED_JSON' }) } });
    }
    expect(await post(service.url, Buffer.from('{"name":"\\ud800"}', 'utf16le'), { 'content-type': 'application/json; charset=utf-16le' })).toMatchObject(refused);
    // A pair, in either case of hex; an escaped backslash before text that only looks like an escape.
    for (const [text, name] of [['"\\ud83d\\ude42"', '🙂'], ['"\\uD83D\\uDE42!"', '🙂!'], ['"\\\\ud800"', '\\ud800'], ['"\\u00e9\\"\\u0041"', 'é"A']]) {
      expect(await post(service.url, `{"name":${text}}`, { 'content-type': 'application/json' })).toEqual({ status: 201, body: { received: { name } } });
    }
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

describe('nesting (nestsDeeperThan, and jsonBody refusing past MAX_JSON_NESTING)', () => {
  it('counts objects and arrays, not brackets in strings or escaped quotes', () => {
    expect(MAX_JSON_NESTING).toBe(64);
    expect(nestsDeeperThan('[[[]]]', 3)).toBe(false);
    expect(nestsDeeperThan('[[[[]]]]', 3)).toBe(true);
    expect(nestsDeeperThan('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(nestsDeeperThan('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify(['['.repeat(100), '\\', '\\"[[[[[', '"{{']), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify(['\\', ['\\"]]']]), 1)).toBe(true);
    expect(nestsDeeperThan(Buffer.from(`{"é😀":"{{{{", "x": [[["ü"]]]}`), 3)).toBe(true);
    expect(nestsDeeperThan(Buffer.from(`{"é😀":"{{{{", "x": [["ü"]]}`), 3)).toBe(false);
  });

  it('refuses a body nested past 64 levels with 400 MALFORMED_JSON, in UTF-8 and UTF-16 alike, and takes 64', async () => {
    const refused = { status: 400, body: { code: 'MALFORMED_JSON', message: 'The request body nests deeper than 64 levels.' } };
    expect(await post(service.url, '['.repeat(65) + ']'.repeat(65), { 'content-type': 'application/json' })).toMatchObject(refused);
    expect(await post(service.url, Buffer.from('['.repeat(65) + ']'.repeat(65), 'utf16le'), { 'content-type': 'application/json; charset=utf-16le' })).toMatchObject(refused);
    expect(await post(service.url, '['.repeat(64) + ']'.repeat(64), { 'content-type': 'application/json' })).toMatchObject({ status: 201 });
    // A proxy judging what it forwards (readForwardedJson) refuses it as the service does.
    expect(readForwardedJson(Buffer.from('['.repeat(65) + ']'.repeat(65)), 'application/json')).toEqual({ refusal: expect.objectContaining({ status: 400, code: 'MALFORMED_JSON', message: refused.body.message }) });
    expect(readForwardedJson(Buffer.from('['.repeat(64) + ']'.repeat(64)), 'application/json')).toEqual({ value: expect.any(Array) });
  });

  it('refuses unreadable JSON on POST, PUT and PATCH only when the handler reads the body, so checks before it answer first', async () => {
    const app = express();
    app.use(jsonBody());
    app.post('/guarded', () => {
      throw new ApiError('FORBIDDEN', 'Not for you.');
    });
    app.delete('/guarded', () => {
      throw new ApiError('FORBIDDEN', 'Not for you.');
    });
    app.post('/library', (req, res) => {
      requireReadableBody(req);
      res.json({ read: true });
    });
    app.use(errorHandler);
    const guarded = await listen(app, 0, '127.0.0.1');
    try {
      for (const body of ['{"a":', '['.repeat(65) + ']'.repeat(65)]) {
        expect((await fetch(`${guarded.url}/guarded`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(403);
        expect((await fetch(`${guarded.url}/library`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(400);
        // A DELETE's handler never reads a body: one it cannot read is refused before it runs, not ignored.
        expect((await fetch(`${guarded.url}/guarded`, { method: 'DELETE', headers: { 'content-type': 'application/json' }, body })).status).toBe(400);
      }
      expect((await fetch(`${guarded.url}/library`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(200);
    } finally {
      await guarded.close();
    }
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

describe('a proxy that judges a body it forwards (readForwardedJson)', () => {
  it('reads every body the service parses as the service parses it: charset named, byte-order mark dropped', async () => {
    const json = '{"password":"p","n":1}';
    const bodies: [string, Buffer][] = [
      ['application/json', Buffer.from(json)],
      ['application/json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)])],
      ['application/json; charset=utf-16le', Buffer.from(json, 'utf16le')],
      ['application/json; charset="UTF-16"', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(json, 'utf16le')])],
      ['application/json; charset=utf-16be', Buffer.from(json, 'utf16le').swap16()],
      // `utf-16` follows the byte-order mark: big-endian behind FE FF (TextDecoder reads it little-endian).
      ['application/json; charset=utf-16', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(json, 'utf16le').swap16()])],
      ['application/merge-patch+json; charset=utf-8', Buffer.from('"text"')],
      // A header the parser reads leniently: an empty parameter (a trailing `;`), and two charsets, the first one counting.
      ['application/json;', Buffer.from(json)],
      ['application/json; charset=utf-8;', Buffer.from(json)],
      ['application/json; charset=utf-16le; charset=utf-8', Buffer.from(json, 'utf16le')],
      // An empty charset is none: the parser reads UTF-8.
      ['application/json; charset=', Buffer.from(json)],
      ['application/json; charset=""', Buffer.from(json)],
    ];
    for (const [contentType, body] of bodies) {
      const served = await post(service.url, body, { 'content-type': contentType });
      expect({ contentType, status: served.status }).toEqual({ contentType, status: 201 });
      expect({ contentType, read: readForwardedJson(body, contentType) }).toEqual({ contentType, read: { value: served.body.received } });
    }
  });

  it('cannot read what the service refuses, and refuses it as the service does', async () => {
    for (const [contentType, body] of [
      ['application/json', Buffer.from('{"a":')],
      ['application/json', Buffer.from('{"name":"\xff"}', 'latin1')],
      ['application/json; charset=utf-16be', Buffer.from('{"a":1}', 'utf16le')],
      // Two charsets: the service reads it in the first.
      ['application/json; charset=utf-8; charset=utf-16le', Buffer.from('{"a":1}', 'utf16le')],
      // A charset JSON is never sent in (415 at the service, not 400), and one no decoder knows.
      ['application/json; charset=iso-8859-1', Buffer.from('{"a":1}')],
      ['application/json; charset=utf-9', Buffer.from('{"a":1}')],
    ] as [string, Buffer][]) {
      const served = await post(service.url, body, { 'content-type': contentType });
      expect({ contentType, status: served.status }).toEqual({ contentType, status: expect.any(Number) });
      expect(served.status).toBeGreaterThanOrEqual(400);
      const read = readForwardedJson(body, contentType);
      expect({ contentType, value: read.value, refusal: read.refusal && { status: read.refusal.status, code: read.refusal.code, message: read.refusal.message } }).toEqual({ contentType, value: undefined, refusal: { status: served.status, code: served.body.code, message: served.body.message } });
    }
  });
});
