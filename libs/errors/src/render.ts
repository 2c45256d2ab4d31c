import { ApiError } from './api-error';
import { errorCatalog, type FieldError } from './codes';

export const PROBLEM_JSON = 'application/problem+json';

export interface ErrorBody {
  code: string;
  message: string;
  traceId: string;
  errors: FieldError[];
}

export interface ProblemBody extends ErrorBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
}

export function toErrorBody(error: ApiError, traceId: string): ErrorBody {
  return { code: error.code, message: error.message, traceId, errors: error.fieldErrors };
}

/** RFC 9457 rendering of the same error, with our fields as extension members. */
export function toProblemBody(error: ApiError, traceId: string, instance: string): ProblemBody {
  const body = toErrorBody(error, traceId);
  return {
    type: `https://docs.example.com/errors/${error.code.toLowerCase().replaceAll('_', '-')}`,
    title: errorCatalog[error.code].title,
    status: error.status,
    detail: error.message,
    instance,
    ...body,
  };
}

/**
 * An error express or its body parser raised for the client's request (a 4xx status on an
 * http-errors object it chose to expose, or on the URIError of a path whose %-encoding is broken;
 * a body that will not inflate): the client's mistake, answered as such.
 */
function clientErrorOf(error: unknown): ApiError | undefined {
  const { status, expose } = (error ?? {}) as { status?: unknown; expose?: unknown };
  // The router marks a path it cannot decode with status 400 on the URIError itself.
  const chosenForClient = expose === true || error instanceof URIError;
  if (!(error instanceof Error) || typeof status !== 'number' || status < 400 || status > 499 || !chosenForClient) return undefined;
  if (status === 413) return new ApiError('PAYLOAD_TOO_LARGE', 'The request body is too large.', { cause: error });
  if (status === 415) return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body encoding or media type is not supported.', { cause: error });
  return new ApiError('MALFORMED_REQUEST', 'The request could not be read (its path or body is malformed).', { cause: error });
}

/** Turns anything thrown into an ApiError; unknown errors become a bare 500 with no internals. */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return clientErrorOf(error) ?? new ApiError('INTERNAL', 'An unexpected error occurred. Quote the traceId when reporting it.', { cause: error });
}
