// The stable error codes of the contract: clients branch on `code`, so a code, once shipped, keeps
// its meaning. Adding one is a non-breaking change.
export const errorCatalog = {
  VALIDATION_FAILED: { status: 400, title: 'Validation failed' },
  /** The message itself cannot be read as HTTP: its framing, its path's %-encoding. */
  MALFORMED_REQUEST: { status: 400, title: 'Malformed request' },
  MALFORMED_JSON: { status: 400, title: 'Malformed JSON' },
  INVALID_CURSOR: { status: 400, title: 'Invalid cursor' },
  UNAUTHENTICATED: { status: 401, title: 'Unauthenticated' },
  INVALID_CREDENTIALS: { status: 401, title: 'Invalid credentials' },
  FORBIDDEN: { status: 403, title: 'Forbidden' },
  NOT_FOUND: { status: 404, title: 'Not found' },
  UNSUPPORTED_VERSION: { status: 404, title: 'Unsupported API version' },
  METHOD_NOT_ALLOWED: { status: 405, title: 'Method not allowed' },
  NOT_ACCEPTABLE: { status: 406, title: 'Not acceptable' },
  REQUEST_TIMEOUT: { status: 408, title: 'Request timeout' },
  EMAIL_TAKEN: { status: 409, title: 'Email taken' },
  REVIEW_EXISTS: { status: 409, title: 'Review exists' },
  SKU_TAKEN: { status: 409, title: 'SKU taken' },
  OUT_OF_STOCK: { status: 409, title: 'Out of stock' },
  ORDER_ALREADY_CANCELED: { status: 409, title: 'Order already canceled' },
  ORDER_NOT_CANCELABLE: { status: 409, title: 'Order not cancelable' },
  ORDER_NOT_EDITABLE: { status: 409, title: 'Order not editable' },
  CONFLICT: { status: 409, title: 'Conflict' },
  /** The user holds the most active API keys allowed; one must be revoked first. */
  API_KEY_LIMIT_REACHED: { status: 409, title: 'API key limit reached' },
  /** A revoked or expired API key cannot be rotated. */
  API_KEY_NOT_ACTIVE: { status: 409, title: 'API key not active' },
  /** A deprecated element during a brownout of it, or from its sunset day on (contracts/deprecations.yaml). */
  GONE: { status: 410, title: 'Gone' },
  PRECONDITION_FAILED: { status: 412, title: 'Precondition failed' },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload too large' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'Unsupported media type' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, title: 'Idempotency key reused' },
  RATE_LIMITED: { status: 429, title: 'Too many requests' },
  REQUEST_HEADERS_TOO_LARGE: { status: 431, title: 'Request header fields too large' },
  INTERNAL: { status: 500, title: 'Internal error' },
  BAD_GATEWAY: { status: 502, title: 'Bad gateway' },
  SERVICE_UNAVAILABLE: { status: 503, title: 'Service unavailable' },
  GATEWAY_TIMEOUT: { status: 504, title: 'Gateway timeout' },
} as const satisfies Record<string, { status: number; title: string }>;

export type ErrorCode = keyof typeof errorCatalog;

/** Codes of one entry of `errors[]`: what is wrong with one field or parameter. */
export const fieldErrorCodes = [
  'REQUIRED',
  'INVALID_TYPE',
  'INVALID_FORMAT',
  'TOO_SHORT',
  'TOO_LONG',
  'OUT_OF_RANGE',
  'NOT_ALLOWED',
  'UNKNOWN_FIELD',
  'UNKNOWN_PARAMETER',
] as const;

export type FieldErrorCode = (typeof fieldErrorCodes)[number];

export interface FieldError {
  field: string;
  code: FieldErrorCode;
  message: string;
}
