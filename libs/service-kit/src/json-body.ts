// Request bodies, one mechanism for every app: the check that a body is JSON (415) and the one
// JSON parser, whose refusals it throws in the error format. The gateway checks without parsing
// (it forwards bodies as they came); services check and parse.
import express, { type Request, type RequestHandler } from 'express';
import { ApiError, MAX_BODY_BYTES } from '@platform/errors';

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
  // The limit of the parser that refused it: the token route takes far less than 1 MiB.
  'entity.too.large': (error) => ApiError.payloadTooLarge(error.limit),
  'encoding.unsupported': () => new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported.'),
  'charset.unsupported': () => new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body charset is not supported; send UTF-8.'),
  'request.aborted': () => new ApiError('VALIDATION_FAILED', 'The request body was cut short.'),
  'request.size.invalid': () => new ApiError('VALIDATION_FAILED', 'The request body length does not match Content-Length.'),
};

function refusalOf(error: unknown): unknown {
  const type = (error as { type?: unknown } | undefined)?.type;
  const refusal = typeof type === 'string' ? parserRefusals[type] : undefined;
  return refusal ? refusal(error as { limit?: number }) : error;
}

/**
 * Parses a JSON body into `req.body` (any JSON media type unless `type` says otherwise); a body
 * it cannot read is refused with 400 MALFORMED_JSON, 413 or 415. Other failures (a body that will
 * not inflate) go to the error handler as they are.
 */
export function parseJsonBody(options: Parameters<typeof express.json>[0] = {}): RequestHandler {
  const parse = express.json({ type: JSON_MEDIA_TYPES, ...options });
  return (req, res, next) => parse(req, res, (error?: unknown) => next(error === undefined ? undefined : refusalOf(error)));
}

/** What every service mounts: JSON bodies only, at most 1 MiB; any other content type with a body answers 415. */
export function jsonBody(): RequestHandler[] {
  return [requireJsonBody(), parseJsonBody({ limit: MAX_BODY_BYTES, strict: false })];
}
