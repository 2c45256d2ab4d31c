// The client other services use to call Inventory. Every call is built by the one outgoing-call
// factory (libs/outgoing-calls): its deadline from the time left on the HTTP request that caused
// it, the trace and the service token in its metadata, its duration in the outgoing-call metrics,
// and transport failures (unreachable, reset, too slow, not gRPC) mapped by the one rule (503 with
// the one Retry-After, 504, 502). A refusal comes back as the domain error inventory raised
// (fromGrpcStatus: OutOfStock, NotFound...). WatchStock and ReserveStream are for callers that hold
// a stream open (InventoryClient itself); this gateway covers the request/response calls.
import { Metadata, type ServiceError } from '@grpc/grpc-js';
import type { Registry } from 'prom-client';
import { ApiError, Forbidden, Invalid, NotFound, OutOfStock, Unauthenticated, VersionMismatch } from '@platform/errors';
import { createOutgoingCalls, grpcFailure, type OutgoingCalls } from '@platform/outgoing-calls';
import { fromGrpcStatus } from './grpc-errors';
import {
  type AdjustStockReply,
  type AdjustStockRequest,
  type FulfilReply,
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
  /**
   * Every line of one order or none: nothing reserved is OutOfStock, naming the SKUs short of
   * stock or unknown. `replaces`: the order whose reservations these lines replace; its units
   * count as available to them (release `replaces` to keep the replacement, `orderId` to undo it).
   */
  reserveOrder(orderId: string, lines: { sku: string; quantity: number }[], replaces?: string): Promise<ReserveReply[]>;
  release(orderId: string): Promise<number>;
  /** The order shipped: its reservations' stock leaves the warehouse. Idempotent. */
  fulfil(orderId: string): Promise<number>;
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

/**
 * What a failed call means to its caller. Inventory's refusal of what was asked is the domain
 * error it raised; a refusal of the call itself (its fields, our service token) is our fault,
 * not our client's; anything else failed on the way.
 */
export function failureOf(error: ServiceError): Error {
  const transport = grpcFailure('inventory', error);
  if (transport) return transport;
  const refusal = fromGrpcStatus(error);
  if (refusal instanceof Invalid) return new ApiError('INTERNAL', 'An unexpected error occurred.', { cause: error });
  if (refusal instanceof Forbidden || refusal instanceof Unauthenticated || refusal instanceof VersionMismatch) return new ApiError('BAD_GATEWAY', 'Inventory answered with an error.', { cause: error });
  return refusal ?? new ApiError('BAD_GATEWAY', 'Inventory answered with an error.', { cause: error });
}

/** To a caller reserving stock, a SKU inventory does not know is one it cannot have: OutOfStock, naming the same SKUs. */
function reservationFailureOf(error: ServiceError): Error {
  const failure = failureOf(error);
  return failure instanceof NotFound ? new OutOfStock(failure.message, failure.keys) : failure;
}

/**
 * One channel per calling replica, spread over every inventory replica the address resolves to:
 * `dns:///inventory-service-grpc:50051` (a headless Service) gives one address per pod, and
 * round_robin sends each call to the next ready one. The default, pick_first, would send every call
 * of this replica to one pod for the connection's life, and a ClusterIP Service balances
 * connections, not calls. Inventory closes each connection after GRPC_CONNECTION_MAX_AGE_MS, so the
 * name is resolved again and pods added by a scale-up get calls too; a pod stopping closes its
 * connections too, and the name is resolved again then. grpc-js resolves a name at most every 30 s
 * by default, so a pod added or replaced waited up to that long before it got a call, and a
 * rolling update faster than that could leave a replica with no address it knew still serving:
 * here at most every 2 s (a query per replica only when a connection closes). The service config
 * is ours alone: none is read from DNS (no TXT lookups).
 */
const INVENTORY_CHANNEL_OPTIONS = {
  'grpc.keepalive_time_ms': 30_000,
  'grpc.keepalive_timeout_ms': 5_000,
  'grpc.dns_min_time_between_resolutions_ms': 2_000,
  'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
  'grpc.service_config_disable_resolution': 1,
};

export function createInventoryClient(address: string, options: InventoryClientOptions = {}): InventoryGateway {
  const calls = options.calls ?? createOutgoingCalls({ serviceToken: options.serviceToken, registry: options.registry, defaultTimeoutMs: options.defaultTimeoutMs });
  const client = calls.grpcClient(InventoryClient, 'inventory', address, INVENTORY_CHANNEL_OPTIONS);

  // The factory's interceptor sets each call's deadline and metadata.
  function unary<Req, Res>(method: (req: Req, metadata: Metadata, callback: (error: ServiceError | null, response: Res) => void) => unknown, request: Req, failure = failureOf): Promise<Res> {
    return new Promise((resolve, reject) => {
      method.call(client, request, new Metadata(), (error, response) => (error ? reject(failure(error)) : resolve(response)));
    });
  }

  function reserveOrder(orderId: string, lines: { sku: string; quantity: number }[], replaces = ''): Promise<ReserveReply[]> {
    return new Promise((resolve, reject) => {
      const call = client.reserveOrder(new Metadata(), (error, reply: ReserveOrderReply) => (error ? reject(reservationFailureOf(error)) : resolve(reply.reservations)));
      for (const line of lines) call.write({ orderId, ...line, replacesOrderId: replaces });
      call.end();
    });
  }

  return {
    reserve: (request) => unary<ReserveRequest, ReserveReply>(client.reserve, request, reservationFailureOf),
    reserveOrder,
    release: async (orderId) => (await unary<{ orderId: string }, ReleaseReply>(client.release, { orderId })).releasedCount,
    fulfil: async (orderId) => (await unary<{ orderId: string }, FulfilReply>(client.fulfil, { orderId })).fulfilledCount,
    getStock: async (skus) => (await unary<GetStockRequest, GetStockReply>(client.getStock, { skus })).levels,
    setStock: async (request) => (await unary<SetStockRequest, SetStockReply>(client.setStock, request)).level!,
    adjustStock: async (request) => (await unary<AdjustStockRequest, AdjustStockReply>(client.adjustStock, request)).level!,
    close: () => client.close(),
  };
}
