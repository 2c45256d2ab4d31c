// The gRPC door of inventory: Inventory (Reserve, Release), grpc.health.v1.Health and server
// reflection. Every call's deadline is checked before the work and raced during it.
import { Server, ServerCredentials, status, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation, protoPath as healthProtoPath } from 'grpc-health-check';
import { Counter, type Registry } from 'prom-client';
import { InventoryService, type InventoryServer, type ReleaseReply, type ReleaseRequest, type ReserveReply, type ReserveRequest } from '@platform/inventory-contract';
import type { Logger, Stoppable } from '@platform/service-kit';
import { InventoryError, type StockService } from '../stock/service';

export const INVENTORY_SERVICE_NAME = 'inventory.v1.Inventory';

const statusOf: Record<InventoryError['code'], status> = {
  INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  NOT_FOUND: status.NOT_FOUND,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
};

class DeadlineExceeded extends Error {}

function msUntil(deadline: ReturnType<ServerUnaryCall<unknown, unknown>['getDeadline']>): number {
  if (deadline === Infinity) return Infinity;
  return (deadline instanceof Date ? deadline.getTime() : Number(deadline)) - Date.now();
}

/** Runs `work` unless the deadline has passed; answers DEADLINE_EXCEEDED if it passes meanwhile. */
async function withinDeadline<T>(call: ServerUnaryCall<unknown, unknown>, work: () => Promise<T>): Promise<T> {
  const left = msUntil(call.getDeadline());
  if (left <= 0) throw new DeadlineExceeded();
  if (left === Infinity) return work();
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new DeadlineExceeded()), left)))]);
  } finally {
    clearTimeout(timer);
  }
}

export interface InventoryGrpc {
  server: Server;
  health: HealthImplementation;
  listen(port: number, host?: string): Promise<number>;
  stoppable: Stoppable;
}

export function createInventoryGrpc(options: { stock: StockService; protoPath: string; logger: Logger; registry: Registry }): InventoryGrpc {
  const { stock, logger } = options;
  const calls = new Counter({ name: 'grpc_server_handled_total', help: 'gRPC calls answered', labelNames: ['grpc_method', 'grpc_code'], registers: [options.registry] });

  function unary<Req, Res>(method: string, work: (request: Req) => Promise<Res>) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      withinDeadline(call as ServerUnaryCall<unknown, unknown>, () => work(call.request)).then(
        (reply) => {
          calls.inc({ grpc_method: method, grpc_code: 'OK' });
          callback(null, reply);
        },
        (error: unknown) => {
          let code: status = status.INTERNAL;
          let details = 'Internal error.';
          if (error instanceof InventoryError) {
            code = statusOf[error.code];
            details = error.message;
          } else if (error instanceof DeadlineExceeded) {
            code = status.DEADLINE_EXCEEDED;
            details = `${method} did not finish before the caller's deadline.`;
          } else {
            logger.error({ err: error, method }, 'gRPC call failed');
          }
          calls.inc({ grpc_method: method, grpc_code: status[code] });
          callback({ code, details });
        },
      );
    };
  }

  const implementation: InventoryServer = {
    reserve: unary<ReserveRequest, ReserveReply>('Reserve', (request) => stock.reserve(request)),
    release: unary<ReleaseRequest, ReleaseReply>('Release', async (request) => ({ releasedCount: await stock.release(request.orderId) })),
  };

  const server = new Server({ 'grpc.keepalive_permit_without_calls': 1 });
  server.addService(InventoryService, implementation);
  const health = new HealthImplementation({ '': 'SERVING', [INVENTORY_SERVICE_NAME]: 'SERVING' });
  health.addToServer(server);
  // Reflection describes both services, so tools such as grpcurl need no local proto files.
  new ReflectionService(loadSync([options.protoPath, healthProtoPath], { keepCase: true })).addToServer(server);

  return {
    server,
    health,
    listen: (port, host = '0.0.0.0') =>
      new Promise((resolve, reject) => server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)))),
    stoppable: {
      close: () =>
        new Promise<void>((resolve) => {
          health.setStatus('', 'NOT_SERVING');
          health.setStatus(INVENTORY_SERVICE_NAME, 'NOT_SERVING');
          server.tryShutdown(() => resolve());
        }),
      forceClose: () => server.forceShutdown(),
    },
  };
}
