// The one error vocabulary of the business: what use cases and repositories raise when a request
// cannot be carried out. A domain error knows its stable code (the one clients branch on, from the
// catalog in codes.ts) and, for invalid input, which fields are at fault; it knows nothing of HTTP,
// GraphQL or gRPC. Each transport maps it once: REST in render.ts (`asApiError`: the status),
// GraphQL in graphql-kit (`graphQLErrorOf`), gRPC in inventory-contract (`toGrpcStatus`, and
// `fromGrpcStatus` back on the client's side).
import type { ErrorCode, FieldError } from './codes';

export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;
  /** One entry per field at fault (Invalid, OutOfStock for the lines short of stock); empty otherwise. */
  readonly fieldErrors: readonly FieldError[];

  constructor(message: string, fieldErrors: readonly FieldError[] = []) {
    super(message);
    this.name = new.target.name;
    this.fieldErrors = fieldErrors;
  }

  /**
   * The same refusal in a caller's own names for the fields (a route whose query parameter `sku`
   * is the use case's `skus[0]`, a GraphQL argument `input` around a REST body's fields): one
   * entry per renamed field, their messages joined; everything else about the error is kept.
   */
  withFieldNames(nameOf: (field: string) => string): this {
    const byName = new Map<string, FieldError>();
    for (const fieldError of this.fieldErrors) {
      const field = nameOf(fieldError.field);
      const seen = byName.get(field);
      byName.set(field, seen ? { ...seen, message: `${seen.message}; ${fieldError.message}` } : { ...fieldError, field });
    }
    // A copy with every own property (an Error's message and stack are not enumerable), its fields renamed.
    const renamed = Object.create(Object.getPrototypeOf(this) as object, Object.getOwnPropertyDescriptors(this)) as this;
    Object.defineProperty(renamed, 'fieldErrors', { value: [...byName.values()], writable: true, enumerable: true, configurable: true });
    return renamed;
  }
}

/** The request reads as sent but breaks a rule (a range, a length, a thing that must exist). */
export class Invalid extends DomainError {
  readonly code = 'VALIDATION_FAILED';
}

/** What the request names does not exist, or is not the caller's to see. `keys`: which ones, when several were asked. */
export class NotFound extends DomainError {
  readonly code = 'NOT_FOUND';

  constructor(
    message: string,
    readonly keys: readonly string[] = [],
  ) {
    super(message);
  }

  /** The usual sentence: "Order not found." */
  static of(what: string, keys: readonly string[] = []): NotFound {
    return new NotFound(`${what} not found.`, keys);
  }
}

/** The codes of a request that clashes with what exists now; `CONFLICT` when no more precise one applies. */
export type ConflictCode = Extract<
  ErrorCode,
  | 'CONFLICT'
  | 'EMAIL_TAKEN'
  | 'REVIEW_EXISTS'
  | 'SKU_TAKEN'
  | 'ORDER_ALREADY_CANCELED'
  | 'ORDER_NOT_CANCELABLE'
  | 'ORDER_NOT_EDITABLE'
  | 'API_KEY_LIMIT_REACHED'
  | 'API_KEY_NOT_ACTIVE'
  | 'IDEMPOTENCY_KEY_REUSED'
>;

/** The request clashes with the current state (a taken e-mail, an order already shipped, a bound reached). */
export class Conflict extends DomainError {
  constructor(
    readonly code: ConflictCode,
    message: string,
    fieldErrors: readonly FieldError[] = [],
  ) {
    super(message, fieldErrors);
  }
}

/** Not enough stock: nothing was reserved. `skus`: the ones short (or unknown, to the caller that asked for them). */
export class OutOfStock extends DomainError {
  readonly code = 'OUT_OF_STOCK';

  constructor(
    message: string,
    readonly skus: readonly string[] = [],
    fieldErrors: readonly FieldError[] = [],
  ) {
    super(message, fieldErrors);
  }
}

/** A change that named a version of the resource (If-Match) which is no longer the current one. */
export class VersionMismatch extends DomainError {
  readonly code = 'PRECONDITION_FAILED';

  constructor(message = 'If-Match does not match the current ETag of the resource.') {
    super(message);
  }
}

/** The caller is known but may not do this. */
export class Forbidden extends DomainError {
  readonly code = 'FORBIDDEN';

  constructor(message = 'You are not allowed to do this.') {
    super(message);
  }
}

/** The caller is not known: no valid credential (`UNAUTHENTICATED`), or a wrong e-mail or password (`INVALID_CREDENTIALS`). */
export class Unauthenticated extends DomainError {
  constructor(
    message = 'A valid bearer token is required.',
    readonly code: Extract<ErrorCode, 'UNAUTHENTICATED' | 'INVALID_CREDENTIALS'> = 'UNAUTHENTICATED',
  ) {
    super(message);
  }
}
