// The gRPC mapping both ways: a domain error sent by inventory comes back to its caller as the
// same domain error, so orders' REST answer is what inventory's own REST answer would be.
import { Metadata, status } from '@grpc/grpc-js';
import { asApiError, Conflict, type DomainError, Forbidden, Invalid, NotFound, OutOfStock, toProblemBody, Unauthenticated, VersionMismatch } from '@platform/errors';
import { fromGrpcStatus, REFUSED_SKUS_METADATA, toGrpcStatus } from './grpc-errors';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

const errors: [string, DomainError, status][] = [
  ['Invalid with field errors', new Invalid('sku is longer than 64 characters', [{ field: 'sku', code: 'INVALID_FORMAT', message: 'sku is longer than 64 characters' }]), status.INVALID_ARGUMENT],
  ['NotFound naming SKUs', new NotFound('Unknown SKU A, B; nothing was reserved.', ['A', 'B']), status.NOT_FOUND],
  ['OutOfStock naming SKUs and lines', new OutOfStock('OUT_OF_STOCK: A has 1 available, 2 requested', ['A'], [{ field: 'items[0].quantity', code: 'OUT_OF_RANGE', message: 'Not enough stock of p-1.' }]), status.FAILED_PRECONDITION],
  ['Conflict', new Conflict('CONFLICT', 'A has 3 reserved; on_hand cannot be set below that.'), status.FAILED_PRECONDITION],
  ['Conflict with a precise code', new Conflict('SKU_TAKEN', 'SKU A is taken.'), status.FAILED_PRECONDITION],
  ['VersionMismatch', new VersionMismatch(), status.ABORTED],
  ['Forbidden', new Forbidden('users-service may not call inventory.'), status.PERMISSION_DENIED],
  ['Unauthenticated', new Unauthenticated('Send a valid service token: authorization: Bearer <token>.'), status.UNAUTHENTICATED],
];

describe.each(errors)('%s', (_name, error, code) => {
  it('travels as its gRPC status code with the message as details', () => {
    expect(toGrpcStatus(error)).toMatchObject({ code, details: error.message });
  });

  it('comes back as the same domain error', () => {
    const back = fromGrpcStatus(toGrpcStatus(error));
    expect(back).toBeInstanceOf(error.constructor);
    expect(back).toEqual(error);
    expect([back?.code, back?.message, back?.fieldErrors]).toEqual([error.code, error.message, error.fieldErrors]);
  });

  it('is then the same REST problem body as the error inventory raised', () => {
    const back = fromGrpcStatus(toGrpcStatus(error));
    expect(toProblemBody(asApiError(back), TRACE, '/v1/orders')).toEqual(toProblemBody(asApiError(error), TRACE, '/v1/orders'));
    expect(asApiError(back).headers).toEqual(asApiError(error).headers);
  });
});

it('carries the SKUs of NotFound and OutOfStock in the metadata older callers read', () => {
  const { metadata } = toGrpcStatus(new OutOfStock('OUT_OF_STOCK: A', ['A']));
  expect(JSON.parse((metadata!.get(REFUSED_SKUS_METADATA)[0] as Buffer).toString('utf8'))).toEqual(['A']);
  expect((fromGrpcStatus(toGrpcStatus(new NotFound('Unknown SKU B.', ['B']))) as NotFound).keys).toEqual(['B']);
});

it('reads a status without details by its code alone, never by its message', () => {
  const refused = new Metadata();
  refused.set(REFUSED_SKUS_METADATA, Buffer.from(JSON.stringify(['A'])));
  // Messages that say nothing of what happened: the code decides.
  expect(fromGrpcStatus({ code: status.FAILED_PRECONDITION, details: 'no', metadata: refused })).toEqual(new OutOfStock('no', ['A']));
  expect(fromGrpcStatus({ code: status.NOT_FOUND, details: 'OUT_OF_STOCK: A', metadata: refused })).toEqual(new NotFound('OUT_OF_STOCK: A', ['A']));
  expect(fromGrpcStatus({ code: status.INVALID_ARGUMENT, details: 'request_id' })).toBeInstanceOf(Invalid);
  expect(fromGrpcStatus({ code: status.FAILED_PRECONDITION, details: '' })).toEqual(new OutOfStock('Not enough stock for this order.'));
  // A call that failed on its way carries no domain error: the transport's mapping decides.
  for (const code of [status.DEADLINE_EXCEEDED, status.UNAVAILABLE, status.INTERNAL, status.UNKNOWN]) expect(fromGrpcStatus({ code, details: 'OUT_OF_STOCK' })).toBeUndefined();
});
