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

/** Turns anything thrown into an ApiError; unknown errors become a bare 500 with no internals. */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError('INTERNAL', 'An unexpected error occurred. Quote the traceId when reporting it.', { cause: error });
}
