// Request bodies, one mechanism for every app: the check that a body is JSON (415) and the one
// JSON parser, whose refusals it throws in the error format. The gateway checks without parsing
// (it forwards bodies as they came); services check and parse.
import { isUtf8 } from 'node:buffer';
import { createRequire } from 'node:module';
import express, { type Request, type RequestHandler } from 'express';
import { ApiError, MAX_BODY_BYTES } from '@platform/errors';

/**
 * The deepest JSON any app reads: objects and arrays nested more than this are refused before
 * they are parsed. No request of the API nests deeper than 4; a walk over a value (validation,
 * logging, GraphQL variables) then never meets depth it has to pay for.
 */
export const MAX_JSON_NESTING = 64;

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Whether JSON text nests objects and arrays deeper than `max`, read in one pass over its
 * characters (or UTF-8 bytes: no byte of a multi-byte character is ASCII) without parsing it.
 * Brackets inside strings are text. Text that is not JSON may pass: the parser refuses it.
 */
export function nestsDeeperThan(text: string | Uint8Array, max: number = MAX_JSON_NESTING): boolean {
  const at = typeof text === 'string' ? (index: number) => text.charCodeAt(index) : (index: number) => text[index];
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = at(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (++depth > max) return true;
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

const LETTER_U = 0x75;
const HIGH_SURROGATES = [0xd800, 0xdbff] as const;
const LOW_SURROGATES = [0xdc00, 0xdfff] as const;

/**
 * Whether JSON text has a `\uXXXX` escape of a lone surrogate: a high one (D800–DBFF) not
 * followed at once by an escaped low one (DC00–DFFF), or a low one by itself. JSON's grammar lets
 * it through (RFC 8259 §8.2), but it is no character: JavaScript keeps it, and the database
 * driver, the UTF-8 on the wire and every reader after it turn it into U+FFFD, so a name sent as
 * "\ud800" was stored and answered as "\ufffd". I-JSON (RFC 7493 §2.1) refuses it, and so do we,
 * as we refuse bytes that are not text. One pass, like nestsDeeperThan: a backslash can only
 * start an escape (outside strings it is not JSON at all).
 */
export function escapesLoneSurrogate(text: string | Uint8Array): boolean {
  const at = typeof text === 'string' ? (index: number) => text.charCodeAt(index) : (index: number) => text[index];
  const unitAt = (index: number) => {
    if (at(index) !== BACKSLASH || at(index + 1) !== LETTER_U) return Number.NaN;
    const hex = String.fromCharCode(at(index + 2), at(index + 3), at(index + 4), at(index + 5));
    return /^[\da-f]{4}$/i.test(hex) ? Number.parseInt(hex, 16) : Number.NaN;
  };
  const within = (unit: number, [low, high]: readonly [number, number]) => unit >= low && unit <= high;
  for (let index = 0; index < text.length; index++) {
    if (at(index) !== BACKSLASH) continue;
    const unit = unitAt(index);
    if (Number.isNaN(unit)) {
      index++; // another escape (\n, \\, \"): its second character is no backslash to read
      continue;
    }
    index += 5;
    if (within(unit, LOW_SURROGATES)) return true;
    if (!within(unit, HIGH_SURROGATES)) continue;
    if (!within(unitAt(index + 1), LOW_SURROGATES)) return true;
    index += 6;
  }
  return false;
}

/** The refusal of JSON that escapes a lone surrogate (escapesLoneSurrogate), wherever it is read (a body, a GraphQL parameter). */
export function escapedLoneSurrogate(what = 'The request body'): ApiError {
  return new ApiError('MALFORMED_JSON', `${what} escapes a lone UTF-16 surrogate (\\uD800 to \\uDFFF without its pair), which is no character.`);
}

/** The refusal of JSON nested past MAX_JSON_NESTING, wherever it is read (a body, a GraphQL parameter). */
export function tooDeeplyNested(what = 'The request body'): ApiError {
  return new ApiError('MALFORMED_JSON', `${what} nests deeper than ${MAX_JSON_NESTING} levels.`);
}

/** Every JSON media type a body may be sent as (matched case-insensitively). */
export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

/**
 * 415 for a body that is not JSON. `refuseContentCoding`: also 415 for a body with a content
 * coding, for a proxy that forwards bodies as they are and so never decodes them.
 */
export function requireJsonBody(options: { refuseContentCoding?: boolean } = {}): RequestHandler {
  return (req, _res, next) => {
    if (!hasBody(req)) return next();
    if (!req.is(JSON_MEDIA_TYPES)) throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.');
    const coding = req.headers['content-encoding'];
    if (options.refuseContentCoding && coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
      throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body without a content coding.');
    }
    next();
  };
}

/** The body parser's refusals (body-parser's error `type`s), as the client sees them. */
const parserRefusals: Record<string, (error: { limit?: number }) => ApiError> = {
  'entity.parse.failed': () => new ApiError('MALFORMED_JSON', 'The request body is not valid JSON.'),
  'entity.text.invalid': () => new ApiError('MALFORMED_JSON', 'The request body is not valid text in its charset (UTF-8 unless Content-Type names another).'),
  'entity.text.surrogate': () => escapedLoneSurrogate(),
  'entity.too.deep': () => tooDeeplyNested(),
  // The limit of the parser that refused it: the token route takes far less than 1 MiB.
  'entity.too.large': (error) => ApiError.payloadTooLarge(error.limit),
  'encoding.unsupported': () => new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported.'),
  'charset.unsupported': () => new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body charset is not supported; send UTF-8.'),
  'request.aborted': () => new ApiError('VALIDATION_FAILED', 'The request body was cut short.'),
  'request.size.invalid': () => new ApiError('VALIDATION_FAILED', 'The request body length does not match Content-Length.'),
};

/** The client's answer to a parser error, if its `type` is one the parser refuses a body with. */
function parserRefusal(error: unknown): ApiError | undefined {
  const type = (error as { type?: unknown } | undefined)?.type;
  return typeof type === 'string' && Object.hasOwn(parserRefusals, type) ? parserRefusals[type](error as { limit?: number }) : undefined;
}

/** A parser error as the client sees it; any other failure goes on as it is. */
function refusalOf(error: unknown): unknown {
  return parserRefusal(error) ?? error;
}

type ParserOptions = NonNullable<Parameters<typeof express.json>[0]>;

/**
 * The two libraries express.json (body-parser) reads a body with, as it resolves them: the
 * header's parser and the decoder. Not the copies a package.json of ours would name: content-type
 * 1 (the workspace's) throws on `application/json;` and keeps the last of two charsets, where
 * body-parser's content-type 2 reads the header leniently and keeps the first, so a body the
 * service took looked unreadable to the gateway, and went by its checks.
 */
const parserRequire = createRequire(createRequire(require.resolve('express')).resolve('body-parser'));
const parserContentType = parserRequire('content-type') as { parse(header: string): { parameters: Record<string, string | undefined> } };
const parserDecoder = parserRequire('iconv-lite') as { encodingExists(encoding: string): boolean; decode(bytes: Buffer, encoding: string): string };

const notText = () => Object.assign(new Error('not text in its charset'), { type: 'entity.text.invalid' });

/**
 * The checks of a body's text before JSON.parse sees it, one pass each, for the services' parser
 * and a proxy's reading alike: bytes that are text in their charset (asText), no escaped lone
 * surrogate (escapesLoneSurrogate), no nesting past MAX_JSON_NESTING.
 */
function checkText(body: Buffer, encoding: string): void {
  const text = asText(body, encoding);
  if (escapesLoneSurrogate(text)) throw Object.assign(new Error('a lone surrogate escaped'), { type: 'entity.text.surrogate' });
  if (nestsDeeperThan(text)) throw Object.assign(new Error('too deeply nested'), { type: 'entity.too.deep' });
}

/**
 * A body as text it can be read as: UTF-8 as its bytes, another UTF (16, 32) decoded. Bytes that
 * are not text in that charset are refused (JSON is text, RFC 8259: left to the parser, they
 * would reach the handler as U+FFFD and be stored so); a charset the platform cannot decode
 * (UTF-7) is refused as the parser refuses charsets.
 */
function asText(body: Buffer, encoding: string): Buffer | string {
  if (/^utf-?8$/i.test(encoding)) {
    if (!isUtf8(body)) throw notText();
    return body;
  }
  let decode: (bytes: Buffer) => string;
  try {
    const decoder = new TextDecoder(encoding, { fatal: true });
    decode = (bytes) => decoder.decode(bytes);
  } catch {
    throw Object.assign(new Error('unsupported charset'), { type: 'charset.unsupported' });
  }
  try {
    return decode(body);
  } catch {
    throw notText();
  }
}

/** What readForwardedJson found: the value the service will read, or the service's refusal of the body. */
export type ForwardedJson = { value: unknown; refusal?: undefined } | { value?: undefined; refusal: ApiError };

/**
 * A body as the services' parser (jsonBody) reads it, for a proxy that judges a body it forwards
 * (the gateway), with the parser's own libraries (parserContentType, parserDecoder): the charset
 * as it reads the header (UTF-8 when it names none or an empty one; the first of two), the bytes checked as the
 * parser checks them (checkText: text, escapes, nesting), then decoded (a byte-order mark followed, and dropped) and parsed;
 * an empty body reads as `{}`. Read any other way (as UTF-8 whatever it said, or UTF-16 as
 * little-endian only), a body looked like "not JSON, the service will refuse it" to the gateway
 * while the service read it and acted on it. A body the service would refuse comes back as the
 * service's refusal (parserRefusals: 415 for a charset, 400 for text or JSON it cannot read), so
 * a proxy that refuses it answers as the service would have.
 */
export function readForwardedJson(body: Buffer | undefined, contentTypeHeader: string | undefined): ForwardedJson {
  if (!body || body.length === 0) return { value: {} };
  try {
    // `||`, as body-parser reads it: an empty charset (`charset=`, `charset=""`) is none, so UTF-8.
    const charset = (contentTypeHeader ? parserContentType.parse(contentTypeHeader).parameters.charset?.toLowerCase() : undefined) || 'utf-8';
    if (!charset.startsWith('utf-') || !parserDecoder.encodingExists(charset)) throw Object.assign(new Error('unsupported charset'), { type: 'charset.unsupported' });
    checkText(body, charset);
    return { value: JSON.parse(parserDecoder.decode(body, charset)) as unknown };
  } catch (error) {
    // What is no refusal of the parser's (JSON.parse's SyntaxError, a header it cannot read) is a body it cannot read.
    return { refusal: parserRefusal(error) ?? parserRefusals['entity.parse.failed']({}) };
  }
}

/**
 * Before JSON.parse sees a body, one pass over its bytes each: bytes that are not text in their
 * charset are refused, and so are escapes of lone surrogates and nesting past MAX_JSON_NESTING, so no later walk over the value
 * (ours, zod's, a logger's) can be made to cost more than its size.
 */
function checkedBeforeParsing(verify: ParserOptions['verify']): NonNullable<ParserOptions['verify']> {
  return (req, res, body, encoding) => {
    checkText(body, encoding);
    verify?.(req, res, body, encoding);
  };
}

/**
 * Parses a JSON body into `req.body` (any JSON media type unless `type` says otherwise); a body
 * it cannot read is refused with 400 MALFORMED_JSON (nested past MAX_JSON_NESTING too), 413 or
 * 415. Other failures (a body that will not inflate) go to the error handler as they are.
 */
export function parseJsonBody(options: ParserOptions = {}): RequestHandler {
  const parse = express.json({ type: JSON_MEDIA_TYPES, ...options, verify: checkedBeforeParsing(options.verify) });
  return (req, res, next) => parse(req, res, (error?: unknown) => next(error === undefined ? undefined : refusalOf(error)));
}

/** Refusals of what a body says rather than of its size or type: answered once the caller is known to be allowed. */
const UNREADABLE_CONTENT = new Set(['MALFORMED_JSON']);

/** The methods whose handlers read a body; any other method's handler ignores one, so it is refused at once. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Authorization before validation: on POST, PUT and PATCH a body that is not readable JSON
 * (400 MALFORMED_JSON) is refused when it is first read, by the handler, and not here. So a
 * customer calling an admin-only route gets 403, and a caller without a token 401, whatever body
 * they sent (they learn nothing of what the route reads). The bytes were still read and checked
 * here, nesting included, before any other work; size and media-type refusals (413, 415) stay
 * immediate, and so does any refusal on other methods, whose handlers never read the body (a
 * DELETE with a body it cannot read is refused, not carried out as if it had none).
 */
function refuseWhenRead(req: Request, next: (error?: unknown) => void) {
  return (error?: unknown) => {
    const refusal = error === undefined ? undefined : refusalOf(error);
    if (!(refusal instanceof ApiError) || !UNREADABLE_CONTENT.has(refusal.code) || !BODY_METHODS.has(req.method)) return next(refusal);
    Object.defineProperty(req, 'body', {
      configurable: true,
      get: () => {
        throw refusal;
      },
    });
    next();
  };
}

/** Throws the refusal of a body jsonBody() could not read, for code that hands `req.body` to a library rather than reading it. */
export function requireReadableBody(req: Request): void {
  void req.body;
}

/**
 * What every service mounts: JSON bodies only, at most 1 MiB, nested at most MAX_JSON_NESTING
 * deep; any other content type with a body answers 415. Unreadable JSON is refused when the
 * handler reads `req.body`, after authentication and the route's role check.
 */
export function jsonBody(): RequestHandler[] {
  const parse = express.json({ type: JSON_MEDIA_TYPES, limit: MAX_BODY_BYTES, strict: false, verify: checkedBeforeParsing(undefined) });
  return [requireJsonBody(), (req, res, next) => parse(req, res, refuseWhenRead(req, next))];
}
