// The gRPC mapping of the domain's errors, both ways: inventory's server turns a domain error
// into a status with details (`toGrpcStatus`), and its callers turn that status back into the same
// domain error (`fromGrpcStatus`). The status code is for gRPC tooling and callers that read only
// it; the details travel in trailing metadata, so nothing is ever read back from a message's text.
import { Metadata, type StatusObject, status } from '@grpc/grpc-js';
import { Conflict, type ConflictCode, type DomainError, type FieldError, Forbidden, Invalid, NotFound, OutOfStock, Unauthenticated, VersionMismatch } from '@platform/errors';

/**
 * Trailing metadata of a ReserveOrder refused with NOT_FOUND or FAILED_PRECONDITION: the JSON
 * array of the SKUs that were unknown or short of stock.
 */
export const REFUSED_SKUS_METADATA = 'refused-skus-bin';

/** Trailing metadata of every refusal: the domain error as JSON (`DomainErrorDetails`). */
export const DOMAIN_ERROR_METADATA = 'domain-error-bin';

interface DomainErrorDetails {
  code: DomainError['code'];
  message: string;
  fieldErrors: FieldError[];
  /** NotFound's keys, OutOfStock's SKUs. */
  keys: string[];
}

function statusCodeOf(error: DomainError): status {
  if (error instanceof Invalid) return status.INVALID_ARGUMENT;
  if (error instanceof NotFound) return status.NOT_FOUND;
  if (error instanceof OutOfStock || error instanceof Conflict) return status.FAILED_PRECONDITION;
  if (error instanceof VersionMismatch) return status.ABORTED;
  if (error instanceof Forbidden) return status.PERMISSION_DENIED;
  if (error instanceof Unauthenticated) return status.UNAUTHENTICATED;
  return status.FAILED_PRECONDITION;
}

function keysOf(error: DomainError): readonly string[] {
  if (error instanceof NotFound) return error.keys;
  if (error instanceof OutOfStock) return error.skus;
  return [];
}

/** A domain error as the status a gRPC caller receives: the code, the message as details, the whole error in trailing metadata. */
export function toGrpcStatus(error: DomainError): Pick<StatusObject, 'code' | 'details' | 'metadata'> {
  const metadata = new Metadata();
  const keys = keysOf(error);
  const details: DomainErrorDetails = { code: error.code, message: error.message, fieldErrors: [...error.fieldErrors], keys: [...keys] };
  metadata.set(DOMAIN_ERROR_METADATA, Buffer.from(JSON.stringify(details)));
  if (keys.length) metadata.set(REFUSED_SKUS_METADATA, Buffer.from(JSON.stringify(keys)));
  return { code: statusCodeOf(error), details: error.message, metadata };
}

function domainErrorOf(details: DomainErrorDetails): DomainError {
  switch (details.code) {
    case 'VALIDATION_FAILED':
      return new Invalid(details.message, details.fieldErrors);
    case 'NOT_FOUND':
      return new NotFound(details.message, details.keys);
    case 'OUT_OF_STOCK':
      return new OutOfStock(details.message, details.keys, details.fieldErrors);
    case 'PRECONDITION_FAILED':
      return new VersionMismatch(details.message);
    case 'FORBIDDEN':
      return new Forbidden(details.message);
    case 'UNAUTHENTICATED':
    case 'INVALID_CREDENTIALS':
      return new Unauthenticated(details.message, details.code);
    default:
      return new Conflict(details.code as ConflictCode, details.message, details.fieldErrors);
  }
}

function jsonOf<T>(metadata: Metadata | undefined, key: string): T | undefined {
  const value = metadata?.get(key)[0];
  if (!Buffer.isBuffer(value)) return undefined;
  try {
    return JSON.parse(value.toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

/**
 * The domain error a gRPC status carries, or undefined when it carries none (the call failed on
 * its way: deadline, unavailable, an internal fault; the caller's transport mapping decides).
 * A server that sends no details (older, or a stand-in) is read by its status code: INVALID_ARGUMENT
 * is Invalid, NOT_FOUND NotFound and FAILED_PRECONDITION OutOfStock, with the refused SKUs if named.
 */
export function fromGrpcStatus(error: Pick<StatusObject, 'code' | 'details'> & { metadata?: Metadata }): DomainError | undefined {
  const details = jsonOf<DomainErrorDetails>(error.metadata, DOMAIN_ERROR_METADATA);
  if (details && typeof details.code === 'string' && typeof details.message === 'string') return domainErrorOf({ ...details, fieldErrors: details.fieldErrors ?? [], keys: details.keys ?? [] });
  const refusedSkus = jsonOf<string[]>(error.metadata, REFUSED_SKUS_METADATA) ?? [];
  switch (error.code) {
    case status.INVALID_ARGUMENT:
      return new Invalid(error.details);
    case status.NOT_FOUND:
      return new NotFound(error.details, refusedSkus);
    case status.FAILED_PRECONDITION:
      return new OutOfStock(error.details || 'Not enough stock for this order.', refusedSkus);
    default:
      return undefined;
  }
}
