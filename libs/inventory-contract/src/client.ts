// The client other services use to call Inventory. Every call is built by the one outgoing-call
// factory (libs/outgoing-calls): its deadline from the time left on the HTTP request that caused
// it, the trace and the service token in its metadata, its duration in the outgoing-call metrics,
// and transport failures (unreachable, reset, too slow, not gRPC) mapped by the one rule (503 with
// the one Retry-After, 504, 502). What stays here is what Inventory's own answers mean (409
// OUT_OF_STOCK, …). WatchStock and ReserveStream are for callers that hold a stream open
// (InventoryClient itself); this gateway covers the request/response calls.
import { Metadata, type ServiceError, status } from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { ApiError } from '@platform/errors';
import { createOutgoingCalls, grpcFailure, type OutgoingCalls } from '@platform/outgoing-calls';
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

/**
 * Trailing metadata of a ReserveOrder refused with NOT_FOUND or FAILED_PRECONDITION: the JSON
 * array of the SKUs that were unknown or short of stock.
 */
export const REFUSED_SKUS_METADATA = 'refused-skus-bin';

/** ReserveOrder's answer: every line reserved, or (nothing reserved) the SKUs unknown or short of stock. */
export type ReserveOrderResult = { kind: 'reserved'; reservations: ReserveReply[] } | { kind: 'refused'; skus: string[] };

export interface InventoryGateway {
  reserve(request: Pick<ReserveRequest, 'orderId' | 'sku' | 'quantity'>): Promise<ReserveReply>;
  /** Every line of one order or none; an unknown or short SKU is an answer, other failures throw. */
  reserveOrder(orderId: string, lines: { sku: string; quantity: number }[]): Promise<ReserveOrderResult>;
  release(orderId: string): Promise<number>;
  getStock(skus: string[]): Promise<StockLevel[]>;
  setStock(request: SetStockRequest): Promise<StockLevel>;
  adjustStock(request: AdjustStockRequest): Promise<StockLevel>;
  close(): void;
}

export interface InventoryClientOptions {
  /** The app's outgoing-call factory; without it, one is made from the three options below. */
  calls?: OutgoingCalls;
  /** The caller's service token, sent on every call (inventory refuses calls without one). */
  serviceToken?: () => Promise<string>;
  /** Budget for calls made outside an HTTP request (background work). */
  defaultTimeoutMs?: number;
  /** Where every call's duration and outcome are reported (outgoing_call_duration_seconds). */
  registry?: Registry;
}

/** gRPC status → the HTTP error the caller's client sees. */
export function toApiError(error: ServiceError): ApiError {
  const transport = grpcFailure('inventory', error);
  if (transport) return transport;
  switch (error.code) {
    case status.FAILED_PRECONDITION:
    case status.NOT_FOUND:
      return new ApiError('OUT_OF_STOCK', error.details || 'Not enough stock for this order.');
    case status.INVALID_ARGUMENT:
      return new ApiError('INTERNAL', 'An unexpected error occurred.', { cause: error });
    default:
      return new ApiError('BAD_GATEWAY', 'Inventory answered with an error.', { cause: error });
  }
}

export function createInventoryClient(address: string, options: InventoryClientOptions = {}): InventoryGateway {
  const calls = options.calls ?? createOutgoingCalls({ serviceToken: options.serviceToken, registry: options.registry, defaultTimeoutMs: options.defaultTimeoutMs });
  const client = calls.grpcClient(InventoryClient, 'inventory', address, { 'grpc.keepalive_time_ms': 30_000, 'grpc.keepalive_timeout_ms': 5_000 });

  // The factory's interceptor sets each call's deadline and metadata.
  function unary<Req, Res>(method: (req: Req, metadata: Metadata, callback: (error: ServiceError | null, response: Res) => void) => unknown, request: Req): Promise<Res> {
    return new Promise((resolve, reject) => {
      method.call(client, request, new Metadata(), (error, response) => (error ? reject(toApiError(error)) : resolve(response)));
    });
  }

  function reserveOrder(orderId: string, lines: { sku: string; quantity: number }[]): Promise<ReserveOrderResult> {
    return new Promise((resolve, reject) => {
      const call = client.reserveOrder(new Metadata(), (error, reply: ReserveOrderReply) => {
        if (!error) return resolve({ kind: 'reserved', reservations: reply.reservations });
        const refused = error.metadata?.get(REFUSED_SKUS_METADATA)[0];
        if ((error.code === status.FAILED_PRECONDITION || error.code === status.NOT_FOUND) && Buffer.isBuffer(refused)) return resolve({ kind: 'refused', skus: JSON.parse(refused.toString('utf8')) as string[] });
        reject(toApiError(error));
      });
      for (const line of lines) call.write({ orderId, ...line });
      call.end();
    });
  }

  return {
    reserve: (request) => unary<ReserveRequest, ReserveReply>(client.reserve, request),
    reserveOrder,
    release: async (orderId) => (await unary<{ orderId: string }, ReleaseReply>(client.release, { orderId })).releasedCount,
    getStock: async (skus) => (await unary<GetStockRequest, GetStockReply>(client.getStock, { skus })).levels,
    setStock: async (request) => (await unary<SetStockRequest, SetStockReply>(client.setStock, request)).level!,
    adjustStock: async (request) => (await unary<AdjustStockRequest, AdjustStockReply>(client.adjustStock, request)).level!,
    close: () => client.close(),
  };
}
