import { type ErrorCode, errorCatalog, type FieldError } from './codes';

/** The largest request body any app takes (1 MiB): the gateway and every service refuse more with 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** The one error type: thrown anywhere, rendered in one place (the error handler). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly fieldErrors: FieldError[];
  /** Extra response headers the error needs (`Allow`, `Retry-After`, `WWW-Authenticate`). */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { status?: number; fieldErrors?: FieldError[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.status = options.status ?? errorCatalog[code].status;
    this.fieldErrors = options.fieldErrors ?? [];
    this.headers = options.headers ?? {};
  }

  static notFound(what = 'Resource'): ApiError {
    return new ApiError('NOT_FOUND', `${what} not found.`);
  }

  static forbidden(message = 'You are not allowed to do this.'): ApiError {
    return new ApiError('FORBIDDEN', message);
  }

  static unauthenticated(message = 'A valid bearer token is required.'): ApiError {
    return new ApiError('UNAUTHENTICATED', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
  }

  static payloadTooLarge(limit: number = MAX_BODY_BYTES): ApiError {
    return new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`);
  }

  static preconditionFailed(): ApiError {
    return new ApiError('PRECONDITION_FAILED', 'If-Match does not match the current ETag of the resource.');
  }
}
