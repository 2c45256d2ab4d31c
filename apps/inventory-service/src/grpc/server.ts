// The gRPC door of inventory: Inventory (Reserve, Release), grpc.health.v1.Health and server
// reflection. Every Inventory call must carry a service token of an allowed caller, and its
// deadline is checked before the work and raced during it. Health and reflection stay open
// (probes and tooling); they change nothing.
import { type Metadata, Server, ServerCredentials, status, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import type { Registry } from 'prom-client';
import { fileDescriptorProtos, InventoryService, type InventoryServer, type ReleaseReply, type ReleaseRequest, type ReserveReply, type ReserveRequest } from '@platform/inventory-contract';
import type { TokenVerifier } from '@platform/auth';
import type { Logger, Stoppable } from '@platform/service-kit';
import { InventoryError, type StockService } from '../stock/service';
import { observeCalls } from './call-observer';

export const INVENTORY_SERVICE_NAME = 'inventory.v1.Inventory';

const statusOf: Record<InventoryError['code'], status> = {
  INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  NOT_FOUND: status.NOT_FOUND,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
};

class DeadlineExceeded extends Error {}

/** A call without a valid service token (UNAUTHENTICATED) or from a service not allowed (PERMISSION_DENIED). */
class CallerRefused extends Error {
  constructor(
    readonly code: status.UNAUTHENTICATED | status.PERMISSION_DENIED,
    message: string,
  ) {
    super(message);
  }
}

export interface InventoryCallers {
  /** Verifies service tokens (the internal audience). */
  verifier: TokenVerifier;
  /** Service names allowed to call Inventory. */
  allowed: readonly string[];
}

async function authenticate(metadata: Metadata, callers: InventoryCallers): Promise<string> {
  const header = metadata.get('authorization')[0];
  let caller: string;
  try {
    caller = (await callers.verifier.verifyHeader(typeof header === 'string' ? header : undefined)).userId;
  } catch {
    throw new CallerRefused(status.UNAUTHENTICATED, 'Send a valid service token: authorization: Bearer <token>.');
  }
  if (!callers.allowed.includes(caller)) throw new CallerRefused(status.PERMISSION_DENIED, `${caller} may not call inventory.`);
  return caller;
}

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

export function createInventoryGrpc(options: { stock: StockService; callers: InventoryCallers; logger: Logger; registry: Registry }): InventoryGrpc {
  const { stock, logger } = options;

  /** Refuses to answer `reason`: its status code and the details the caller sees. */
  function refusal(method: string, reason: unknown): { code: status; details: string } {
    if (reason instanceof InventoryError) return { code: statusOf[reason.code], details: reason.message };
    if (reason instanceof CallerRefused) {
      logger.warn({ method, code: status[reason.code] }, 'gRPC call refused: caller not authenticated or not allowed');
      return { code: reason.code, details: reason.message };
    }
    if (reason instanceof DeadlineExceeded) return { code: status.DEADLINE_EXCEEDED, details: `${method} did not finish before the caller's deadline.` };
    logger.error({ err: reason, method }, 'gRPC call failed');
    return { code: status.INTERNAL, details: 'Internal error.' };
  }

  function unary<Req, Res>(method: string, work: (request: Req) => Promise<Res>) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      authenticate(call.metadata, options.callers)
        .then(() => withinDeadline(call as ServerUnaryCall<unknown, unknown>, () => work(call.request)))
        .then(
          (reply) => {
            callback(null, reply);
          },
          (reason: unknown) => {
            const { code, details } = refusal(method, reason);
            callback({ code, details });
          },
        );
    };
  }

  const implementation: InventoryServer = {
    reserve: unary<ReserveRequest, ReserveReply>('Reserve', (request) => stock.reserve(request)),
    release: unary<ReleaseRequest, ReleaseReply>('Release', async (request) => ({ releasedCount: await stock.release(request.orderId) })),
  };

  const server = new Server({ 'grpc.keepalive_permit_without_calls': 1, interceptors: [observeCalls({ registry: options.registry, logger })] });
  server.addService(InventoryService, implementation);
  const health = new HealthImplementation({ '': 'SERVING', [INVENTORY_SERVICE_NAME]: 'SERVING' });
  health.addToServer(server);
  // Reflection describes both services, so tools such as `buf curl` and grpcurl need no local
  // proto files. It serves buf's descriptors: the ones proto-loader rebuilds are malformed.
  // @grpc/reflection reads only `fileDescriptorProtos` of the definitions it is given.
  new ReflectionService({ descriptors: { fileDescriptorProtos: fileDescriptorProtos() } } as unknown as PackageDefinition).addToServer(server);

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
