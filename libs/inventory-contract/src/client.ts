// The client other services use to call Inventory: every call carries a deadline derived from
// the time left on the HTTP request that caused it. A refusal comes back as the domain error
// inventory raised (fromGrpcStatus: OutOfStock, NotFound...); a call that failed on its way
// becomes the HTTP error format (503, 504, 502). WatchStock and ReserveStream are for callers
// that hold a stream open (InventoryClient itself); this gateway covers the request/response calls.
import { credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { ApiError, Forbidden, Invalid, NotFound, OutOfStock, Unauthenticated, VersionMismatch } from '@platform/errors';
import { outgoingBudgetMs, outgoingTraceparent } from '@platform/service-kit';
import { clientCallMetrics } from './call-metrics';
import { fromGrpcStatus } from './grpc-errors';
import {
  type AdjustStockReply,
  type AdjustStockRequest,
  type GetStockReply,
  type GetStockRequest,
  InventoryClient,
  type ReleaseReply,
  type ReserveOrderReply,
  type ReserveReply,
  type ReserveRequest,
  type SetStockReply,
  type SetStockRequest,
  type StockLevel,
} from './generated/inventory/v1/inventory';

export interface InventoryGateway {
  reserve(request: Pick<ReserveRequest, 'orderId' | 'sku' | 'quantity'>): Promise<ReserveReply>;
  /** Every line of one order or none: nothing reserved is OutOfStock, naming the SKUs short of stock or unknown. */
  reserveOrder(orderId: string, lines: { sku: string; quantity: number }[]): Promise<ReserveReply[]>;
  release(orderId: string): Promise<number>;
  getStock(skus: string[]): Promise<StockLevel[]>;
  setStock(request: SetStockRequest): Promise<StockLevel>;
  adjustStock(request: AdjustStockRequest): Promise<StockLevel>;
  close(): void;
}

export interface InventoryClientOptions {
  /** The caller's service token, sent on every call (inventory refuses calls without one). */
  serviceToken?: () => Promise<string>;
  /** Budget for calls made outside an HTTP request (background work). */
  defaultTimeoutMs?: number;
  /** Where every call's duration and status code are reported (grpc_client_handling_seconds). */
  registry?: Registry;
}

/**
 * What a failed call means to its caller. Inventory's refusal of what was asked is the domain
 * error it raised; a refusal of the call itself (its fields, our service token) is our fault,
 * not our client's; anything else failed on the way.
 */
export function failureOf(error: ServiceError): Error {
  const refusal = fromGrpcStatus(error);
  if (refusal instanceof Invalid) return new ApiError('INTERNAL', 'An unexpected error occurred.', { cause: error });
  if (refusal instanceof Forbidden || refusal instanceof Unauthenticated || refusal instanceof VersionMismatch) return new ApiError('BAD_GATEWAY', 'Inventory answered with an error.', { cause: error });
  return refusal ?? transportFailureOf(error);
}

/** To a caller reserving stock, a SKU inventory does not know is one it cannot have: OutOfStock, naming the same SKUs. */
function reservationFailureOf(error: ServiceError): Error {
  const failure = failureOf(error);
  return failure instanceof NotFound ? new OutOfStock(failure.message, failure.keys) : failure;
}

/** gRPC status of a call that failed on its way → the HTTP error the caller's client sees. */
function transportFailureOf(error: ServiceError): ApiError {
  switch (error.code) {
    case status.DEADLINE_EXCEEDED:
      return new ApiError('GATEWAY_TIMEOUT', 'Inventory did not answer in time.', { cause: error });
    case status.UNAVAILABLE:
    case status.CANCELLED:
    case status.RESOURCE_EXHAUSTED:
      return new ApiError('SERVICE_UNAVAILABLE', 'Inventory is temporarily unavailable; retry shortly.', { headers: { 'Retry-After': '1' }, cause: error });
    default:
      return new ApiError('BAD_GATEWAY', 'Inventory answered with an error.', { cause: error });
  }
}

export function createInventoryClient(address: string, options: InventoryClientOptions = {}): InventoryGateway {
  const client = new InventoryClient(address, credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 5_000,
    interceptors: options.registry ? [clientCallMetrics(options.registry)] : [],
  });
  const defaultTimeoutMs = options.defaultTimeoutMs ?? 5_000;

  // The trace context rides in the metadata too (with the tracing SDK, its gRPC instrumentation writes it).
  async function callOptions(): Promise<{ deadline: Date; metadata: Metadata }> {
    const budget = outgoingBudgetMs(defaultTimeoutMs, 'inventory');
    const metadata = new Metadata();
    if (options.serviceToken) metadata.set('authorization', `Bearer ${await options.serviceToken()}`);
    const traceparent = outgoingTraceparent();
    if (traceparent) metadata.set('traceparent', traceparent);
    return { deadline: new Date(Date.now() + budget), metadata };
  }

  async function unary<Req, Res>(method: (req: Req, metadata: Metadata, options: { deadline: Date }, callback: (error: ServiceError | null, response: Res) => void) => unknown, request: Req, failure = failureOf): Promise<Res> {
    const { deadline, metadata } = await callOptions();
    return new Promise((resolve, reject) => {
      method.call(client, request, metadata, { deadline }, (error, response) => (error ? reject(failure(error)) : resolve(response)));
    });
  }

  async function reserveOrder(orderId: string, lines: { sku: string; quantity: number }[]): Promise<ReserveReply[]> {
    const { deadline, metadata } = await callOptions();
    return new Promise((resolve, reject) => {
      const call = client.reserveOrder(metadata, { deadline }, (error, reply: ReserveOrderReply) => (error ? reject(reservationFailureOf(error)) : resolve(reply.reservations)));
      for (const line of lines) call.write({ orderId, ...line });
      call.end();
    });
  }

  return {
    reserve: (request) => unary<ReserveRequest, ReserveReply>(client.reserve, request, reservationFailureOf),
    reserveOrder,
    release: async (orderId) => (await unary<{ orderId: string }, ReleaseReply>(client.release, { orderId })).releasedCount,
    getStock: async (skus) => (await unary<GetStockRequest, GetStockReply>(client.getStock, { skus })).levels,
    setStock: async (request) => (await unary<SetStockRequest, SetStockReply>(client.setStock, request)).level!,
    adjustStock: async (request) => (await unary<AdjustStockRequest, AdjustStockReply>(client.adjustStock, request)).level!,
    close: () => client.close(),
  };
}
