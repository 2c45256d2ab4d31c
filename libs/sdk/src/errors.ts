// Errors by code: the API's answers other than 2xx carry a stable `code` (docs/api.md), and a
// client branches on it. The SDK types it as the documented codes or any other string, because a
// newer server may answer a code this version does not know; a switch over it still completes.
import { errorCodes, graphqlErrorCodes } from './error-codes';
import type { components } from './openapi-types';

/** A code the API documents (`OUT_OF_STOCK`, `VALIDATION_FAILED`...). */
export type ErrorCode = (typeof errorCodes)[number];
/** The error format every non-2xx answer has. */
export type ErrorBody = components['schemas']['Error'];

const documented: ReadonlySet<string> = new Set(errorCodes);

/** Whether `code` is one the API documents (else: a newer server's code; give it default handling). */
export function isErrorCode(code: string): code is ErrorCode {
  return documented.has(code);
}

/**
 * A code only a GraphQL error carries in `errors[].extensions.code` (`GRAPHQL_PARSE_FAILED`,
 * `QUERY_DEPTH_LIMIT_EXCEEDED`...); otherwise that code is an ErrorCode, as REST would answer.
 */
export type GraphQLErrorCode = (typeof graphqlErrorCodes)[number];

const documentedGraphQL: ReadonlySet<string> = new Set(graphqlErrorCodes);

/** Whether a GraphQL error's `extensions.code` is one of GraphQL's own the API documents. */
export function isGraphQLErrorCode(code: string): code is GraphQLErrorCode {
  return documentedGraphQL.has(code);
}

/** A non-2xx answer, thrown by `orThrow` and `allItems` for code that prefers exceptions to checking `error`. */
export class ApiRequestError extends Error {
  /** Stable: branch on it. The documented codes, or one this SDK does not know yet. */
  readonly code: ErrorCode | (string & Record<never, never>);
  /** The HTTP status. */
  readonly status: number;
  /** The fields at fault (VALIDATION_FAILED), else empty. */
  readonly errors: ErrorBody['errors'];
  /** Quote it when reporting a problem (the X-Request-Id header). */
  readonly traceId: string;

  constructor(
    readonly response: Response,
    readonly body: ErrorBody,
  ) {
    super(`${response.status} ${body.code}: ${body.message}`);
    this.name = 'ApiRequestError';
    this.status = response.status;
    this.code = body.code;
    this.errors = body.errors ?? [];
    this.traceId = body.traceId;
  }

  /** Narrows to one documented code: `if (error.is('OUT_OF_STOCK')) ...`. */
  is<C extends ErrorCode>(code: C): this is ApiRequestError & { code: C } {
    return this.code === code;
  }
}

/** The data of a 2xx answer (undefined for a 204), or throws ApiRequestError with the error body. */
export function orThrow<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (!result.response.ok) throw new ApiRequestError(result.response, errorBodyOf(result.error, result.response));
  return result.data as T;
}

/** The error body, also when an answer is not in the format (a proxy's HTML page, an empty body). */
function errorBodyOf(error: unknown, response: Response): ErrorBody {
  const body = error as Partial<ErrorBody> | undefined;
  if (body && typeof body === 'object' && typeof body.code === 'string') {
    return { code: body.code, message: String(body.message ?? ''), traceId: String(body.traceId ?? response.headers.get('x-request-id') ?? ''), errors: Array.isArray(body.errors) ? body.errors : [] };
  }
  return { code: `HTTP_${response.status}`, message: response.statusText || 'The answer was not in the error format.', traceId: response.headers.get('x-request-id') ?? '', errors: [] };
}
