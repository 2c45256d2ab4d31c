import { z } from 'zod';
import { ApiError } from './api-error';
import { errorCatalog, fieldErrorCodes } from './codes';
import { DomainError, Invalid } from './domain';

export const PROBLEM_JSON = 'application/problem+json';

/** The one error format, as the OpenAPI document publishes it (`Error`). */
export const errorBodySchema = z.object({
  code: z.string().meta({ description: 'Stable; clients branch on it. Unknown codes get default handling.', examples: Object.keys(errorCatalog) }),
  message: z.string(),
  traceId: z.string().meta({ description: 'Quote it when reporting a problem; the same as the X-Request-Id header.' }),
  errors: z.array(z.object({ field: z.string(), code: z.enum(fieldErrorCodes), message: z.string() })).meta({ description: 'One entry per field or parameter at fault; empty otherwise.' }),
});

export type ErrorBody = z.infer<typeof errorBodySchema>;

/** RFC 9457 problem details with the error format's fields as extension members (`Problem`). */
export const problemBodySchema = z
  .object({
    type: z.url().meta({ example: 'https://docs.example.com/errors/not-found' }),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    detail: z.string(),
    instance: z.string().meta({ format: 'uri-reference' }),
  })
  .extend(errorBodySchema.shape)
  .meta({ description: 'RFC 9457 problem details, with the error format\'s fields as extension members. Sent for `Accept: application/problem+json`.' });

export type ProblemBody = z.infer<typeof problemBodySchema>;

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

/**
 * The REST mapping of the domain's errors, the only place one gets its HTTP status: the catalog's
 * status for its code, except that Invalid is 422 (which requests are Invalid and which are
 * refused unread, 400, the validation library decides: `refusalOf`), and UNAUTHENTICATED names the scheme.
 */
function restErrorOf(error: DomainError): ApiError {
  const status = error instanceof Invalid ? 422 : errorCatalog[error.code].status;
  const headers: Record<string, string> = error.code === 'UNAUTHENTICATED' ? { 'WWW-Authenticate': 'Bearer' } : {};
  return new ApiError(error.code, error.message, { status, fieldErrors: [...error.fieldErrors], headers, cause: error });
}

/** Turns anything thrown into an ApiError; unknown errors become a bare 500 with no internals. */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof DomainError) return restErrorOf(error);
  return clientErrorOf(error) ?? new ApiError('INTERNAL', 'An unexpected error occurred. Quote the traceId when reporting it.', { cause: error });
}
