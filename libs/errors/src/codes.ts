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
  /** The request target (path and query) is longer than a server reads (libs/service-kit listen). */
  URI_TOO_LONG: { status: 414, title: 'URI too long' },
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

/**
 * The codes only a GraphQL answer carries, in `errors[].extensions.code`, beside the codes above
 * (a GraphQL error of a use case carries the code REST sends). The same promise: a code, once
 * shipped, keeps its meaning. The OpenAPI document lists them on GraphQLResponse, and the SDK's
 * `graphqlErrorCodes` is generated from there. Each `*_LIMIT_EXCEEDED` names its limit in an
 * extension beside the code (`cost`, `depth`...: `{requested, limit}`).
 */
export const graphqlErrorCatalog = {
  /** The document is not GraphQL: a syntax error, with its `locations`. */
  GRAPHQL_PARSE_FAILED: 'The document cannot be parsed',
  /** The document does not fit the schema, no operation of it can run for the operationName sent, or its variables do not fit it. */
  GRAPHQL_VALIDATION_FAILED: 'The document is not valid against the schema',
  /** A document longer than the limit, refused before it is read (`length: {requested, limit}`, in UTF-16 code units). */
  QUERY_LENGTH_LIMIT_EXCEEDED: 'Document length limit exceeded',
  /** More tokens than the parser reads (`tokens: {limit}`; parsing stops there, so no count). */
  QUERY_TOKEN_LIMIT_EXCEEDED: 'Token limit exceeded',
  /** Fields nested deeper than the limit (`depth: {requested, limit}`). */
  QUERY_DEPTH_LIMIT_EXCEEDED: 'Depth limit exceeded',
  /** More aliases in one operation than the limit (`aliases: {requested, limit}`). */
  QUERY_ALIAS_LIMIT_EXCEEDED: 'Alias limit exceeded',
  /** More directives in one operation than the limit (`directives: {requested, limit}`). */
  QUERY_DIRECTIVE_LIMIT_EXCEEDED: 'Directive limit exceeded',
  /** A name (operation, alias, fragment, variable) longer than the limit (`nameLength: {requested, limit}`). */
  NAME_LENGTH_LIMIT_EXCEEDED: 'Name too long',
  /** The operation costs more than the limit (`cost: {requested, limit}`). */
  QUERY_COST_LIMIT_EXCEEDED: 'Cost limit exceeded',
  /** More mutation fields (writes) in one request than the limit (`mutationFields: {requested, limit}`). */
  MUTATION_LIMIT_EXCEEDED: 'Mutation field limit exceeded',
  /** No trusted document has the hash sent. */
  PERSISTED_QUERY_NOT_FOUND: 'Trusted document not found',
  /** The query sent is not the trusted document its hash names. */
  PERSISTED_QUERY_HASH_MISMATCH: 'Trusted document hash mismatch',
  /** Only trusted documents run, and the request named none. */
  PERSISTED_QUERY_NOT_ALLOWED: 'Only trusted documents run',
} as const satisfies Record<string, string>;

export type GraphQLErrorCode = keyof typeof graphqlErrorCatalog;

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
