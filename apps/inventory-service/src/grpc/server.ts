// The gRPC door of inventory: Inventory (unary, server-, client- and bidirectional-streaming
// calls), grpc.health.v1.Health and server reflection. Every Inventory call must carry a service
// token of an allowed caller; its deadline is checked before the work and raced during it, and a
// stream's resources are freed the moment the caller cancels or its deadline passes. Health and
// reflection stay open (probes and tooling); they change nothing.
import {
  Metadata,
  Server,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServerDuplexStream,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
} from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { Counter, Histogram, type Registry } from 'prom-client';
import {
  fileDescriptorProtos,
  REFUSED_SKUS_METADATA,
  InventoryService,
  type InventoryServer,
  type ReserveLine,
  type ReserveOrderReply,
  type ReserveReply,
  type ReserveRequest,
  type StockLevel,
  type WatchStockRequest,
} from '@platform/inventory-contract';
import type { TokenVerifier } from '@platform/auth';
import type { Logger, Stoppable } from '@platform/service-kit';
import { InventoryError, MAX_LINES, RefusedSkus, type StockService } from '../stock/service';
import { logCalls } from './call-log';

export const INVENTORY_SERVICE_NAME = 'inventory.v1.Inventory';
/** Levels a WatchStock caller may leave unread before the watch is ended (RESOURCE_EXHAUSTED). */
const MAX_UNREAD_LEVELS = 10_000;
/** ReserveStream requests answered at once per stream; past it the stream stops reading until replies go out. */
const MAX_IN_FLIGHT = 1_000;

const statusOf: Record<InventoryError['code'], status> = {
  INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  NOT_FOUND: status.NOT_FOUND,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
  ABORTED: status.ABORTED,
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

type AnyCall = { getDeadline(): ReturnType<ServerUnaryCall<unknown, unknown>['getDeadline']> };

function msUntil(deadline: ReturnType<AnyCall['getDeadline']>): number {
  if (deadline === Infinity) return Infinity;
  return (deadline instanceof Date ? deadline.getTime() : Number(deadline)) - Date.now();
}

/** Runs `work` unless the deadline has passed; answers DEADLINE_EXCEEDED if it passes meanwhile. */
async function withinDeadline<T>(call: AnyCall, work: () => Promise<T>): Promise<T> {
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

/**
 * Calls `gone` once if the caller goes before the server is done with a stream call: it
 * cancelled, or its deadline passed (grpc-js then answers DEADLINE_EXCEEDED itself). `isOver()`
 * is true from then on; `done()` says the server answered, so nothing more is watched.
 */
function whileCallerWaits(call: NodeJS.EventEmitter & AnyCall, gone: (why: 'cancelled' | 'deadline') => void): { isOver(): boolean; done(): void } {
  let over = false;
  let timer: NodeJS.Timeout | undefined;
  const once = (why: 'cancelled' | 'deadline' | 'answered') => {
    if (over) return;
    over = true;
    clearTimeout(timer);
    if (why !== 'answered') gone(why);
  };
  call.on('cancelled', () => once(msUntil(call.getDeadline()) <= 0 ? 'deadline' : 'cancelled'));
  const left = msUntil(call.getDeadline());
  if (left !== Infinity) timer = setTimeout(() => once('deadline'), Math.max(0, left));
  return { isOver: () => over, done: () => once('answered') };
}

export interface InventoryGrpc {
  server: Server;
  health: HealthImplementation;
  listen(port: number, host?: string): Promise<number>;
  stoppable: Stoppable;
}

export function createInventoryGrpc(options: { stock: StockService; callers: InventoryCallers; logger: Logger; registry: Registry; onStop?: () => Promise<void> }): InventoryGrpc {
  const { stock, logger } = options;
  const registers = [options.registry];
  const calls = new Counter({ name: 'grpc_server_handled_total', help: 'gRPC calls answered, by method and status code', labelNames: ['grpc_method', 'grpc_code', 'grpc_type'], registers });
  const durations = new Histogram({
    name: 'grpc_server_handling_seconds',
    help: 'Time from a gRPC call\'s start to its status, by method and status code (streams: the whole stream)',
    labelNames: ['grpc_method', 'grpc_type', 'grpc_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers,
  });
  const messages = new Counter({ name: 'grpc_server_msg_total', help: 'gRPC stream messages, by method and direction', labelNames: ['grpc_method', 'direction'], registers });

  /** Starts the clock of one call; the function it returns records its status once. */
  function track(method: string, type: 'unary' | 'server_stream' | 'client_stream' | 'bidi_stream'): (code: status) => void {
    const stop = durations.startTimer({ grpc_method: method, grpc_type: type });
    let recorded = false;
    return (code) => {
      if (recorded) return;
      recorded = true;
      stop({ grpc_code: status[code] });
      calls.inc({ grpc_method: method, grpc_code: status[code], grpc_type: type });
    };
  }

  /** Refuses to answer `reason`: its status code and the details the caller sees. */
  function refusal(method: string, reason: unknown): { code: status; details: string; metadata?: Metadata } {
    if (reason instanceof RefusedSkus) {
      const metadata = new Metadata();
      metadata.set(REFUSED_SKUS_METADATA, Buffer.from(JSON.stringify(reason.skus)));
      return { code: statusOf[reason.code], details: reason.message, metadata };
    }
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
      const finish = track(method, 'unary');
      authenticate(call.metadata, options.callers)
        .then(() => withinDeadline(call, () => work(call.request)))
        .then(
          (reply) => {
            finish(status.OK);
            callback(null, reply);
          },
          (reason: unknown) => {
            const { code, details, metadata } = refusal(method, reason);
            finish(code);
            callback({ code, details, metadata });
          },
        );
    };
  }

  /** The current levels, then every change, until the caller cancels or its deadline passes. */
  function watchStock(call: ServerWritableStream<WatchStockRequest, StockLevel>): void {
    const finish = track('WatchStock', 'server_stream');
    let unwatch: (() => void) | undefined;
    const caller = whileCallerWaits(call, (why) => {
      unwatch?.();
      finish(why === 'deadline' ? status.DEADLINE_EXCEEDED : status.CANCELLED);
    });
    const end = (code: status, details: string) => {
      if (caller.isOver()) return;
      caller.done();
      unwatch?.();
      finish(code);
      call.emit('error', { code, details });
    };
    const send = (level: StockLevel) => {
      if (caller.isOver()) return;
      if (call.writableLength >= MAX_UNREAD_LEVELS) return end(status.RESOURCE_EXHAUSTED, `More than ${MAX_UNREAD_LEVELS} levels unread; watch again.`);
      messages.inc({ grpc_method: 'WatchStock', direction: 'sent' });
      call.write(level);
    };
    authenticate(call.metadata, options.callers)
      .then(() => stock.watch(call.request.skus, send, () => end(status.UNAVAILABLE, 'Inventory is stopping; watch again.')))
      .then(
        (stop) => {
          // The caller may have gone while the first levels were read.
          if (caller.isOver()) stop();
          else unwatch = stop;
        },
        (reason: unknown) => {
          const { code, details } = refusal('WatchStock', reason);
          end(code, details);
        },
      );
  }

  /** Collects one order's lines until the caller half-closes, then reserves all or none. */
  function reserveOrder(call: ServerReadableStream<ReserveLine, ReserveOrderReply>, callback: sendUnaryData<ReserveOrderReply>): void {
    const finish = track('ReserveOrder', 'client_stream');
    let lines: ReserveLine[] = [];
    let tooMany = false;
    const caller = whileCallerWaits(call, (why) => {
      lines = [];
      finish(why === 'deadline' ? status.DEADLINE_EXCEEDED : status.CANCELLED);
    });
    const answer = (error: { code: status; details: string; metadata?: Metadata } | null, reply?: ReserveOrderReply) => {
      if (caller.isOver()) return;
      caller.done();
      finish(error ? error.code : status.OK);
      callback(error, reply);
    };
    const authenticated = authenticate(call.metadata, options.callers);
    call.on('data', (line: ReserveLine) => {
      messages.inc({ grpc_method: 'ReserveOrder', direction: 'received' });
      if (lines.length < MAX_LINES) lines.push(line);
      else tooMany = true;
    });
    const halfClosed = new Promise<void>((resolve) => call.on('end', resolve));
    authenticated
      .then(() => halfClosed)
      .then(() => {
        if (caller.isOver()) return undefined;
        if (tooMany) throw new InventoryError('INVALID_ARGUMENT', `an order has at most ${MAX_LINES} lines`);
        return withinDeadline(call, () => stock.reserveOrder(lines));
      })
      .then(
        (reply) => reply && answer(null, { orderId: reply.orderId, reservations: reply.reservations.map((reservation) => ({ ...reservation, error: undefined })) }),
        (reason: unknown) => answer(refusal('ReserveOrder', reason)),
      );
  }

  /** One reply per request, in the order of the requests; a refusal is a reply, not the end. */
  function reserveStream(call: ServerDuplexStream<ReserveRequest, ReserveReply>): void {
    const finish = track('ReserveStream', 'bidi_stream');
    const authenticated = authenticate(call.metadata, options.callers);
    // A refused caller gets no replies: the stream ends with its status (below).
    const allowed = authenticated.then(() => true, () => false);
    let replies: Promise<unknown> = allowed;
    let inFlight = 0;
    let paused = false;
    const caller = whileCallerWaits(call, (why) => finish(why === 'deadline' ? status.DEADLINE_EXCEEDED : status.CANCELLED));
    const replyTo = (request: ReserveRequest): Promise<ReserveReply> =>
      stock.reserve(request).then(
        (reservation) => ({ ...reservation, error: undefined }),
        (reason: unknown) => {
          const { code, details } = refusal('ReserveStream', reason);
          return { reservationId: '', sku: request.sku, quantity: 0, remaining: 0, error: { code, message: details } };
        },
      );
    call.on('data', (request: ReserveRequest) => {
      messages.inc({ grpc_method: 'ReserveStream', direction: 'received' });
      inFlight += 1;
      if (inFlight >= MAX_IN_FLIGHT && !paused) {
        paused = true;
        call.pause();
      }
      // Every request starts now (concurrent ones on a SKU share a statement); replies leave in order.
      const reply = allowed.then((yes) => (yes ? replyTo(request) : undefined));
      replies = replies.then(() => reply).then((answer) => {
        inFlight -= 1;
        if (caller.isOver() || !answer) return;
        messages.inc({ grpc_method: 'ReserveStream', direction: 'sent' });
        call.write(answer);
        if (paused && inFlight < MAX_IN_FLIGHT / 2) {
          paused = false;
          call.resume();
        }
      });
    });
    call.on('end', () => {
      void replies.then(() => {
        if (caller.isOver()) return;
        caller.done();
        finish(status.OK);
        call.end();
      });
    });
    authenticated.catch((reason: unknown) => {
      if (caller.isOver()) return;
      caller.done();
      const { code, details } = refusal('ReserveStream', reason);
      finish(code);
      call.emit('error', { code, details });
    });
  }

  const implementation: InventoryServer = {
    reserve: unary<ReserveRequest, ReserveReply>('Reserve', async (request) => ({ ...(await stock.reserve(request)), error: undefined })),
    release: unary('Release', async (request: { orderId: string }) => ({ releasedCount: await stock.release(request.orderId) })),
    getStock: unary('GetStock', async (request: { skus: string[] }) => ({ levels: await stock.getStock(request.skus) })),
    setStock: unary('SetStock', async (request: { sku: string; onHand: number; requestId: string }) => ({ level: await stock.setStock(request) })),
    adjustStock: unary('AdjustStock', async (request: { sku: string; delta: number; reason: string; requestId: string }) => ({ level: await stock.adjustStock(request) })),
    watchStock,
    reserveOrder,
    reserveStream,
  };

  const server = new Server({ 'grpc.keepalive_permit_without_calls': 1, interceptors: [logCalls(logger)] });
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
      close: async () => {
        health.setStatus('', 'NOT_SERVING');
        health.setStatus(INVENTORY_SERVICE_NAME, 'NOT_SERVING');
        // Watches never end on their own: end them (UNAVAILABLE, watch again elsewhere) so the
        // graceful shutdown waits only for calls that do.
        await options.onStop?.();
        await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      },
      forceClose: () => server.forceShutdown(),
    },
  };
}
