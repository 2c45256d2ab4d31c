// The fuzz campaign: requests for every operation of the published OpenAPI document, with
// hostile paths, queries, headers, bodies and framings, drawn by fast-check from a seed (a
// failure reproduces from its seed). Each answer is judged as an attacker would judge it: a 5xx,
// an error body outside the one format, a trace of the server's insides, another user's data, or
// a process that died.
import { connect } from 'node:net';
import { Agent, request as httpRequest } from 'node:http';
import fc from 'fast-check';

export interface Operation {
  method: string;
  /** `/orders/{id}` (no version prefix). */
  path: string;
  query: { name: string; schema: JsonSchema }[];
  body?: JsonSchema;
}

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  format?: string;
}

export interface Identities {
  anonymous: undefined;
  customer: string;
  admin: string;
}

export interface FuzzRequest {
  method: string;
  /** What goes on the request line, already encoded (possibly malformed on purpose). */
  target: string;
  headers: Record<string, string>;
  body?: string;
  as: keyof Identities;
}

export interface Finding {
  kind: '5xx' | 'format' | 'leak' | 'insides';
  request: FuzzRequest;
  status: number;
  body: string;
}

export interface Tally {
  requests: number;
  serverErrors: number;
  badFormat: number;
  leaks: number;
  crashes: number;
  insides: number;
  statuses: Record<string, number>;
  findings: Finding[];
}

/** Every operation of the document, as `{method, path, query, body}`. */
export function operationsOf(document: { paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: JsonSchema }[]; requestBody?: { content: Record<string, { schema: JsonSchema }> } }>> }): Operation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      query: (operation.parameters ?? []).filter((parameter) => parameter.in === 'query').map(({ name, schema }) => ({ name, schema })),
      body: operation.requestBody?.content['application/json']?.schema,
    })),
  );
}

/** Percent-encodes `text`; a lone surrogate (not encodable) goes as the bytes a naive encoder would send. */
const encode = (text: string): string => {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
};

const hostileText = fc.constantFrom(
  '',
  ' ',
  'x'.repeat(5_000),
  '\u0000',
  'a\u0000b',
  '\u202e\u200b',
  '😀'.repeat(50),
  '\ud800',
  "' OR 1=1 --",
  '"; DROP TABLE orders; --',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '${jndi:ldap://127.0.0.1/x}',
  '{{7*7}}',
  '%00',
  'null',
  'undefined',
  'NaN',
  '-1',
  '9007199254740993',
  '1e309',
  'true',
  'me',
  '01J0000000000000000000000Z',
  '00000000-0000-0000-0000-000000000000',
);

const anyText = fc.oneof(hostileText, fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 20 }));

/** A path segment as it goes on the wire: percent-encoded, or raw and malformed on purpose. */
const pathSegment = (ids: string[]) =>
  fc.oneof(
    fc.constantFrom(...ids).map(encode),
    anyText.map((text) => encode(text) || 'x'),
    fc.constantFrom('%', '%E0%A4%A', '%zz', '%00', '%C0%AE%C0%AE', '..', '.', '%2e%2e', 'a%2Fb', '%252F', ';', 'x;y=1'),
  );

/**
 * What JSON.stringify cannot write or should not hold 20,000 times in memory: numbers as written
 * (1e400, -0, 2^53 + 1), nesting, huge arrays and long strings. Each travels as a short marker
 * (`\u0001raw:<kind>:<how>:<size>\u0001`) and is written out when the request is sent.
 */
const RAW = '\u0001raw:';
const marker = (kind: 'num' | 'nest' | 'array' | 'text', how: string, size = 0) => `${RAW}${kind}:${how}:${size}\u0001`;
/** A marker as JSON.stringify writes it inside a body. */
const MARKER_IN_JSON = /"\\u0001raw:([^"\\]*)\\u0001"/g;
const NESTING: Record<string, [open: string, close: string]> = { a: ['[', ']'], o: ['{"a":', '}'], m: ['[{"a":', '}]'] };
const ITEMS: Record<string, string> = { zero: '0', text: '"x"', object: '{}', null: 'null' };
const UNITS: Record<string, string> = { x: 'x', emoji: '😀', accent: 'é', control: '\u0001', space: ' ' };

/** The text a marker stands for: JSON (in a body) or plain text (in a query string). */
function expand(recipe: string, as: 'json' | 'text'): string {
  const [kind, how, size] = recipe.split(':');
  const count = Number(size);
  switch (kind) {
    case 'num':
      return how;
    case 'nest':
      return NESTING[how][0].repeat(count) + '1' + NESTING[how][1].repeat(count);
    case 'array':
      return `[${Array(count).fill(ITEMS[how]).join(',')}]`;
    default: {
      const text = UNITS[how].repeat(count);
      return as === 'json' ? JSON.stringify(text) : text;
    }
  }
}

/** A value of a query string: a marker written out as text, cut to 2 Ki characters (four stay under the 16 KiB header limit). */
const queryText = (value: string) => (value.startsWith(RAW) ? expand(value.slice(RAW.length, -1), 'text').slice(0, 2 * 1024) : value);

/** The body as sent: every marker written out as JSON. */
export function bodyText(body: string): string {
  if (body.startsWith(RAW)) return expand(body.slice(RAW.length, -1), 'json');
  return body.includes('\\u0001raw:') ? body.replace(MARKER_IN_JSON, (_match, recipe: string) => expand(recipe, 'json')) : body;
}

/** Numbers at and past every edge: 32-bit and 53-bit limits, floats where integers go, -0, overflowing exponents. */
const edgeNumber = fc
  .oneof(
    { weight: 3, arbitrary: fc.constantFrom(2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 2 ** 32, 2 ** 53 - 1, -(2 ** 53), 1e15, 1e21, 0.5, 1.5, -1.5, Number.MIN_VALUE, Number.MAX_VALUE).map(String) },
    // Just past a 32-bit column: what a 64-bit-minded client sends.
    { weight: 3, arbitrary: fc.bigInt({ min: 2n ** 31n, max: 2n ** 48n }).chain((value) => fc.constantFrom(String(value), String(-value))) },
    { weight: 2, arbitrary: fc.constantFrom('-0', '1e400', '-1e400', '1e-400', '9007199254740993', '99999999999999999999', '1E+308', '123456789012345678901234567890', '1e999999999', '0.0000000000000000000001', '1.0', '2147483648.0') },
    { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map(String) },
    { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String) },
  )
  .map((text) => marker('num', text));

/** A string far past any column: up to 256 Ki characters of one kind. */
const longText = fc.tuple(fc.constantFrom(...Object.keys(UNITS)), fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 65, max: 5_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 5_000, max: 256 * 1024 }) })).map(([unit, length]) => marker('text', unit, length));

/** Nesting as a value: arrays, objects or both, from just past the limit to tens of thousands of levels. */
const deepValue = fc
  .tuple(fc.constantFrom(...Object.keys(NESTING)), fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 60, max: 200 }) }, { weight: 1, arbitrary: fc.integer({ min: 200, max: 50_000 }) }))
  .map(([shape, depth]) => marker('nest', shape, depth));

/** A huge array as a value: up to 200,000 items. */
const hugeArray = fc.tuple(fc.constantFrom(...Object.keys(ITEMS)), fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 100, max: 5_000 }) }, { weight: 1, arbitrary: fc.integer({ min: 5_000, max: 200_000 }) })).map(([item, length]) => marker('array', item, length));

/** Text a column or a gRPC string may refuse: control characters, emoji past a width, long text. */
const edgeText = fc.oneof(fc.constantFrom('A\u0001B', 'A\tB', '\u007f', '\u0085', '😀'.repeat(33), 'é'.repeat(65), 'x'.repeat(65), '\ud800', 'A,\u0002'), longText);

/** A value at or past the edge of what `schema` takes. */
function edgeValueFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  const type = Array.isArray(schema.type) ? schema.type.find((candidate) => candidate !== 'null') : schema.type;
  const bounds = [schema.minimum, schema.maximum].filter((bound): bound is number => bound !== undefined).flatMap((bound) => [bound - 1, bound, bound + 1].map(String));
  if (type === 'integer' || type === 'number') return bounds.length ? fc.oneof({ weight: 3, arbitrary: edgeNumber }, { weight: 1, arbitrary: fc.constantFrom(...bounds) }) : edgeNumber;
  return type === 'string' ? edgeText : fc.oneof(edgeNumber, edgeText, deepValue);
}

function valueFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  const type = Array.isArray(schema.type) ? schema.type.find((candidate) => candidate !== 'null') : schema.type;
  const plausible: fc.Arbitrary<unknown> = schema.enum
    ? fc.constantFrom(...schema.enum)
    : type === 'integer'
      ? fc.oneof({ weight: 3, arbitrary: fc.integer({ min: (schema.minimum ?? -10) - 5, max: (schema.maximum ?? 1_000) + 5 }) }, { weight: 1, arbitrary: edgeNumber })
      : type === 'number'
        ? fc.oneof(fc.double({ noNaN: false }), edgeNumber)
        : type === 'boolean'
          ? fc.boolean()
          : type === 'array'
            ? fc.oneof({ weight: 8, arbitrary: fc.array(schema.items ? valueFor(schema.items) : fc.anything(), { maxLength: 4 }) }, { weight: 1, arbitrary: hugeArray })
            : type === 'object'
              ? objectFor(schema)
              : schema.format === 'date'
                ? fc.date({ noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10))
                : fc.oneof({ weight: 8, arbitrary: fc.string({ maxLength: 30 }) }, { weight: 1, arbitrary: longText });
  return fc.oneof(
    { weight: 24, arbitrary: plausible },
    { weight: 8, arbitrary: fc.oneof(anyText, fc.integer(), fc.constant(null), fc.boolean(), fc.array(fc.anything(), { maxLength: 3 }), fc.object({ maxDepth: 2 })) },
    { weight: 1, arbitrary: fc.oneof(edgeNumber, deepValue, hugeArray, longText) },
  );
}

function objectFor(schema: JsonSchema): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(schema.properties ?? {});
  const known = fc.record(Object.fromEntries(properties.map(([name, property]) => [name, valueFor(property)])), { requiredKeys: [] });
  const extra = fc.dictionary(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'role', 'amount', 'userId', 'id', 'password', 'passwordHash', 'version'), fc.string({ maxLength: 10 })), fc.anything({ maxDepth: 2 }), { maxKeys: 3 });
  return fc.oneof({ weight: 4, arbitrary: known }, { weight: 1, arbitrary: fc.tuple(known, extra).map(([a, b]) => ({ ...b, ...a })) });
}

/** A whole body of nesting: just past the limit, tens of thousands of levels, or all of 1 MiB (the attack that blocked services for minutes). */
const deepJson = fc
  .tuple(fc.constantFrom(...Object.keys(NESTING)), fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 50, max: 5_000 }) }, { weight: 3, arbitrary: fc.integer({ min: 5_000, max: 100_000 }) }, { weight: 1, arbitrary: fc.constant(0) }))
  // 0: as deep as fits in 1 MiB, the most any app takes.
  .map(([shape, depth]) => marker('nest', shape, depth || Math.floor((1024 * 1024 - 1) / NESTING[shape].join('').length)));

/** The body text: from the schema (mutated), any JSON, or text that is not JSON at all. */
function bodyFor(operation: Operation): fc.Arbitrary<string | undefined> {
  const fromSchema = operation.body ? objectFor(operation.body).map((value) => JSON.stringify(value)) : fc.constant(undefined);
  return fc.oneof(
    { weight: 6, arbitrary: fromSchema },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', 'nul', '[1,]', '{"__proto__":{"isAdmin":true}}', '{"constructor":{"prototype":{"x":1}}}', '\u0000', '{"a":"\\ud800"}', 'x'.repeat(2 << 20), '1e400', '-0', '[1e999999999]') },
    { weight: 1, arbitrary: deepJson },
    { weight: 1, arbitrary: fc.oneof(hugeArray, edgeNumber, longText) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

const hostileHeaders = fc.record(
  {
    'content-type': fc.constantFrom('application/json', 'APPLICATION/JSON', 'application/vnd.api+json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json, text/plain', ''),
    'content-encoding': fc.constantFrom('gzip', 'br', 'deflate', 'identity', 'x-unknown', 'gzip, gzip'),
    accept: fc.constantFrom('application/json', 'application/problem+json', 'text/html', '*/*', 'application/xml', 'application/graphql-response+json', 'application/json;q=0, */*;q=0.1'),
    'x-request-timeout-ms': fc.constantFrom('1', '0', '-5', '99999999', 'abc'),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', '127.0.0.1, 10.0.0.1', 'garbage'),
    'x-forwarded-prefix': fc.constantFrom('/evil', '//x', '/v1'),
    traceparent: fc.constantFrom('00-00000000000000000000000000000000-0000000000000000-00', 'garbage', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'),
    'if-match': fc.constantFrom('"1"', '*', 'W/"x"', 'garbage'),
    'if-none-match': fc.constantFrom('"1"', '*'),
    'idempotency-key': fc.constantFrom('k', 'x'.repeat(300), 'key with spaces', 'cl\u00e9', '\u00ff\u00fe'),
    expect: fc.constantFrom('100-continue'),
    'user-agent': fc.constantFrom('curl/8.0', 'x'.repeat(500), ''),
  },
  { requiredKeys: [] },
);

/** What a well-behaved client sends. */
const plainHeaders = fc.constantFrom<Record<string, string>>({ 'content-type': 'application/json', accept: 'application/json' }, { 'content-type': 'application/json' });

/** Requests over every operation, as each identity. */
export function requestsFor(operations: Operation[], ids: string[]): fc.Arbitrary<FuzzRequest> {
  return fc.constantFrom(...operations).chain((operation) =>
    fc
      .record({
        segments: fc.tuple(...operation.path.split('/').filter(Boolean).map((part) => (part.startsWith('{') ? pathSegment(ids) : fc.constant(part)))),
        query: fc.oneof(
          {
            weight: 2,
            arbitrary: fc.array(
              fc.oneof(
                operation.query.length ? fc.constantFrom(...operation.query).chain(({ name, schema }) => valueFor(schema).map((value) => [name, value] as const)) : fc.constant(['size', 1] as const),
                fc.tuple(fc.constantFrom('unknown', 'size', 'cursor', 'page', 'offset', 'limit', 'sort', 'q', '__proto__', 'include[]'), anyText),
              ),
              { maxLength: 4 },
            ),
          },
          // One parameter alone at an edge, so no other parameter's refusal hides what the edge does.
          { weight: 1, arbitrary: operation.query.length ? fc.constantFrom(...operation.query).chain(({ name, schema }) => edgeValueFor(schema).map((value) => [[name, value] as const])) : fc.constant([]) },
        ) as fc.Arbitrary<(readonly [string, unknown])[]>,
        rawQuery: fc.constantFrom('', '', '', '&%', '&a=%E0%A4%A', '&size=1&size=2', '&q=%00'),
        version: fc.oneof({ weight: 6, arbitrary: fc.constant('/v1') }, { weight: 1, arbitrary: fc.constantFrom('/v2', '', '/V1') }),
        method: fc.oneof({ weight: 8, arbitrary: fc.constant(operation.method) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND') }),
        // Hostile headers are refused at the door (406, 415...): two requests in three carry plain
        // ones, so their paths, queries and bodies reach the services' validation and databases.
        headers: fc.oneof({ weight: 1, arbitrary: hostileHeaders }, { weight: 2, arbitrary: plainHeaders }),
        body: bodyFor(operation),
        as: fc.constantFrom<keyof Identities>('anonymous', 'customer', 'customer', 'admin'),
      })
      .map(({ segments, query, rawQuery, version, method, headers, body, as }) => {
        // A query string stays under the header limit (16 KiB): long values are cut to 2 Ki characters.
        const search = query.map(([name, value]) => `${encode(name)}=${encode(typeof value === 'string' ? queryText(value) : JSON.stringify(value).slice(0, 2 * 1024))}`).join('&');
        const sent = method === 'GET' || method === 'HEAD' ? (body !== undefined && headers['content-type'] === '' ? body : undefined) : body;
        return { method, target: `${version}/${segments.join('/')}${search || rawQuery ? `?${search}${rawQuery}` : ''}`, headers: Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== '')), body: sent, as };
      }),
  );
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Sends `request` as it is (raw target, headers and body) and reads the whole answer. */
export function send(base: URL, request: FuzzRequest, tokens: Identities): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...request.headers };
    const token = tokens[request.as];
    if (token) headers.authorization = `Bearer ${token}`;
    // Node's client frames bodies of DELETE, OPTIONS and TRACE only when told their length.
    const body = request.body !== undefined && request.method !== 'GET' && request.method !== 'HEAD' ? bodyText(request.body) : undefined;
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const req = httpRequest({ host: base.hostname, port: base.port, method: request.method, path: request.target, headers, agent, timeout: 15_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 15 s')));
    req.on('error', reject);
    if (body !== undefined && /100-continue/i.test(headers.expect ?? '')) {
      // As a client that asked for it does: the body goes only after 100 Continue; a final answer
      // instead (413, 415…) means it is not wanted.
      req.flushHeaders();
      req.once('continue', () => req.end(body));
      req.once('response', () => req.writableEnded || req.end());
    } else {
      req.end(body);
    }
  });
}

/** Framings a proxy may read differently from the server behind it, one request per connection. */
export function rawFramings(host: string, path: string, token: string): { name: string; bytes: string }[] {
  const smuggled = 'GET /v1/users/me HTTP/1.1\r\nHost: x\r\n\r\n';
  const chunked = `${smuggled.length.toString(16)}\r\n${smuggled}\r\n0\r\n\r\n`;
  const auth = `Authorization: Bearer ${token}\r\n`;
  const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
  return methods.flatMap((method) => [
    { name: `${method} chunked body`, bytes: `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}` },
    { name: `${method} chunked and Content-Length`, bytes: `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n${chunked}` },
    { name: `${method} two Content-Lengths`, bytes: `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n{}` },
    { name: `${method} bad chunk size`, bytes: `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n` },
    { name: `${method} Transfer-Encoding gzip, chunked`, bytes: `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n` },
    { name: `${method} obs-fold header`, bytes: `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth}X-Folded: a\r\n b\r\n\r\n` },
  ]);
}

/** Writes `bytes` on a fresh connection and reads until the server closes it or 3 s pass. */
export function rawExchange(host: string, port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    const chunks: Buffer[] = [];
    socket.setTimeout(3_000, () => socket.end());
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', (error) => (chunks.length ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(error)));
    socket.end(bytes);
  });
}

/** The status lines of every answer in a raw exchange, and their bodies (Content-Length framed). */
export function answersIn(raw: string): { status: number; body: string }[] {
  const answers: { status: number; body: string }[] = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) break;
    const head = rest.slice(0, headEnd);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    answers.push({ status: Number(head.slice(9, 12)), body: rest.slice(headEnd + 4, headEnd + 4 + length) });
    rest = rest.slice(headEnd + 4 + length);
  }
  return answers;
}

const INSIDES = [/\bat [\w.<>]+ \(.*:\d+:\d+\)/, /node_modules/, /\bprisma\b/i, /\bSELECT\b.*\bFROM\b/, /\bECONNREFUSED\b/, /\.ts:\d+/, /\bSyntaxError\b/, /\bTypeError\b/];

/** GraphQL's own error shape, which its endpoint answers with (GraphQL over HTTP): `errors[]` with a message and a code. */
function inGraphQLErrorFormat(body: Record<string, unknown>): boolean {
  const errors = body.errors as { message?: unknown; extensions?: { code?: unknown } }[] | undefined;
  return Array.isArray(errors) && errors.length > 0 && errors.every((error) => typeof error.message === 'string' && typeof error.extensions?.code === 'string');
}

/** Whether an error answer is in the one format (JSON or problem+json) with a stable code; GraphQL's endpoint in GraphQL's. */
export function inErrorFormat(answer: Answer, graphql = false): boolean {
  if (answer.status < 400) return true;
  const type = String(answer.headers['content-type'] ?? '');
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    return false;
  }
  if (graphql && inGraphQLErrorFormat(body)) return true;
  const core = typeof body.code === 'string' && typeof body.message === 'string' && typeof body.traceId === 'string' && Array.isArray(body.errors);
  if (type.startsWith('application/problem+json')) return core && typeof body.type === 'string' && body.status === answer.status;
  return type.startsWith('application/json') && core;
}

/** Judges one answer; `secrets` are another user's id and email, which this caller must never see. */
export function judge(tally: Tally, request: FuzzRequest, answer: Answer, secrets: string[]): void {
  tally.requests += 1;
  tally.statuses[answer.status] = (tally.statuses[answer.status] ?? 0) + 1;
  const finding = (kind: Finding['kind']) => tally.findings.length < 50 && tally.findings.push({ kind, request: { ...request, body: request.body?.slice(0, 300) }, status: answer.status, body: answer.body.slice(0, 300) });
  // GraphQL answers 200 with `errors` for client mistakes; only its transport can fail the format.
  const isHead = request.method === 'HEAD';
  if (answer.status >= 500) {
    tally.serverErrors += 1;
    finding('5xx');
  }
  if (!isHead && answer.status >= 400 && !inErrorFormat(answer, /^(\/v1)?\/graphql(\?|$)/.test(request.target))) {
    tally.badFormat += 1;
    finding('format');
  }
  if (INSIDES.some((pattern) => pattern.test(answer.body))) {
    tally.insides += 1;
    finding('insides');
  }
  if (request.as !== 'admin' && secrets.some((secret) => answer.body.includes(secret))) {
    tally.leaks += 1;
    finding('leak');
  }
}

export function emptyTally(): Tally {
  return { requests: 0, serverErrors: 0, badFormat: 0, leaks: 0, crashes: 0, insides: 0, statuses: {}, findings: [] };
}

export function summaryOf(tally: Tally, seed: number): string {
  return `requests ${tally.requests}, 5xx ${tally.serverErrors}, bodies not in the error format ${tally.badFormat}, leaks ${tally.leaks}, crashes ${tally.crashes} (seed ${seed}; server insides shown ${tally.insides})`;
}
