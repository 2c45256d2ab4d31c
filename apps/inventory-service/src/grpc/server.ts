// The gRPC door of inventory: Inventory (unary, server-, client- and bidirectional-streaming
// calls), grpc.health.v1.Health and server reflection. Every Inventory call must carry a service
// token of an allowed caller; its deadline is checked before the work and raced during it, and a
// stream's resources are freed the moment the caller cancels or its deadline passes. Health and
// reflection stay open (probes and tooling); they change nothing.
//
// What a caller can make inventory hold is bounded (StreamLimits): streams and watchers at once,
// per caller and per replica (past them RESOURCE_EXHAUSTED); replies a caller does not read (a
// stream stops reading requests while its replies wait: back-pressure); the time a stream may
// stay idle and its whole duration; and the time a call without a deadline may take.
import {
  Metadata,
  Server,
  ServerCredentials,
  status,
  type handleUnaryCall,
  type sendUnaryData,
  type ServerDuplexStream,
  type ServerReadableStream,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceDefinition,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { Counter, Histogram, type Registry } from 'prom-client';
import {
  fileDescriptorProtos,
  InventoryService,
  type InventoryServer,
  type ReserveLine,
  type ReserveOrderReply,
  type ReserveReply,
  type ReserveRequest,
  type StockLevel,
  type WatchStockRequest,
  toGrpcStatus,
} from '@platform/inventory-contract';
import { isDatabaseUnavailable } from '@platform/db';
import { DomainError, Forbidden, Unauthenticated } from '@platform/errors';
import type { Logger, Stoppable } from '@platform/service-kit';
import type { UsageRecorder } from '@platform/usage';
import { parseMessage } from '@platform/validation';
import { adjustStockRequest, fulfilRequest, getStockRequest, MAX_LINES, releaseRequest, reserveOrderRequest, reserveRequest, setStockRequest, watchStockRequest } from '../stock/schemas';
import type { StockService } from '../stock/service';
import type { Deprecation } from '@platform/deprecations';
import { logCalls } from './call-log';
import { authenticateCall, type InventoryCallers } from './caller';
import { deprecatedRpcs } from './deprecated-rpcs';
import { recordRpcUsage } from './usage';

export const INVENTORY_SERVICE_NAME = 'inventory.v1.Inventory';
/** Levels a WatchStock caller may leave unread before the watch is ended (RESOURCE_EXHAUSTED). */
const MAX_UNREAD_LEVELS = 10_000;
/** ReserveStream requests answered at once per stream; past it the stream stops reading until replies go out. */
const MAX_IN_FLIGHT = 1_000;

/** The bounds on what callers can make one replica hold (config.ts: the GRPC_* settings). */
export interface StreamLimits {
  /** ReserveOrder and ReserveStream calls open at once on this replica, and per caller. */
  maxStreams: number;
  maxStreamsPerCaller: number;
  /** WatchStock calls open at once on this replica, and per caller. */
  maxWatchers: number;
  maxWatchersPerCaller: number;
  /** A stream on which nothing moved this long ends: RESOURCE_EXHAUSTED when its replies wait unread, DEADLINE_EXCEEDED when the caller sent nothing. */
  idleTimeoutMs: number;
  /** No stream lives longer: it ends UNAVAILABLE, and the caller opens a new one. */
  maxDurationMs: number;
  /** The deadline of a call that sets none. */
  defaultDeadlineMs: number;
  /** Health.Watch and reflection streams (they take no token) open at once on this replica, and per peer address. */
  maxOpenStreams: number;
  maxOpenStreamsPerAddress: number;
  /** A connection with no call open this long is closed (GOAWAY); a client reconnects on its next call. */
  connectionIdleMs: number;
  /**
   * Every connection is closed this long after it opened (GOAWAY, ±10 % so they do not all go at
   * once), its open streams let finish within their longest life: the client connects again, so it
   * resolves the address again and reaches replicas started since. Without it, a client that
   * balances per call (round_robin) would never call a pod added by a scale-up.
   */
  connectionMaxAgeMs: number;
}

export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxStreams: 1_000,
  maxStreamsPerCaller: 500,
  maxWatchers: 2_000,
  maxWatchersPerCaller: 1_000,
  idleTimeoutMs: 30_000,
  maxDurationMs: 15 * 60_000,
  defaultDeadlineMs: 30_000,
  maxOpenStreams: 200,
  maxOpenStreamsPerAddress: 20,
  connectionIdleMs: 65_000,
  connectionMaxAgeMs: 5 * 60_000,
};

/** Past a limit of StreamLimits: RESOURCE_EXHAUSTED. */
class LimitReached extends Error {}

/** Calls of one kind open at once, per caller and in all; `take` refuses past either bound. */
class OpenCalls {
  private total = 0;
  private readonly byCaller = new Map<string, number>();

  constructor(
    private readonly what: string,
    private readonly max: number,
    private readonly maxPerCaller: number,
  ) {}

  /** Counts one more call of `caller`; the function it returns gives it back (once). */
  take(caller: string): () => void {
    const mine = this.byCaller.get(caller) ?? 0;
    if (this.total >= this.max) throw new LimitReached(`This replica has ${this.max} ${this.what} open, its limit; retry shortly.`);
    if (mine >= this.maxPerCaller) throw new LimitReached(`${caller} has ${this.maxPerCaller} ${this.what} open, its limit; close one first.`);
    this.total += 1;
    this.byCaller.set(caller, mine + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.total -= 1;
      const left = (this.byCaller.get(caller) ?? 1) - 1;
      if (left > 0) this.byCaller.set(caller, left);
      else this.byCaller.delete(caller);
    };
  }
}

class DeadlineExceeded extends Error {}

export type { InventoryCallers };

type AnyCall = { getDeadline(): ReturnType<ServerUnaryCall<unknown, unknown>['getDeadline']> };

/** The address of a peer as grpc-js's getPeer() names it (`127.0.0.1:50123`, `::1:50123`), without its port. */
function peerAddressOf(peer: string): string {
  return peer.replace(/:\d+$/, '');
}

function msUntil(deadline: ReturnType<AnyCall['getDeadline']>): number {
  if (deadline === Infinity) return Infinity;
  return (deadline instanceof Date ? deadline.getTime() : Number(deadline)) - Date.now();
}

/** Runs `work` unless the deadline (`defaultMs` when the caller set none) has passed; answers DEADLINE_EXCEEDED if it passes meanwhile. */
async function withinDeadline<T>(call: AnyCall, defaultMs: number, work: () => Promise<T>): Promise<T> {
  const set = msUntil(call.getDeadline());
  const left = set === Infinity ? defaultMs : set;
  if (left <= 0) throw new DeadlineExceeded();
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new DeadlineExceeded()), left)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Why a stream ended before the server answered it: the caller went, or a bound of StreamLimits was reached. */
type StreamEnd = 'cancelled' | 'deadline' | 'unread' | 'idle' | 'too-long';

interface StreamWatch {
  isOver(): boolean;
  /** The server answered: nothing more is watched. */
  done(): void;
  /** Something moved on the stream (a message in, a reply out): the idle clock starts again. */
  moved(): void;
  /** The caller sent everything and the server works on the answer (bounded by the deadline): idleness and duration no longer count. */
  working(): void;
}

/**
 * Calls `gone` once if the stream ends before the server is done with it: the caller cancelled,
 * or its deadline passed (grpc-js then answers DEADLINE_EXCEEDED itself); or nothing moved for
 * `idleTimeoutMs` ('unread' when `unread()` says replies wait for the caller to read them, else
 * 'idle'); or the stream reached `maxDurationMs`. For the last three the server ends the call
 * itself, in `gone`. `isOver()` is true from then on.
 */
function watchStream(call: NodeJS.EventEmitter & AnyCall, limits: StreamLimits, idle: { unread(): boolean; quietIsFine: boolean }, gone: (why: StreamEnd) => void): StreamWatch {
  let over = false;
  let lastMoved = Date.now();
  let deadline: NodeJS.Timeout | undefined;
  let idleCheck: NodeJS.Timeout | undefined;
  const tooLong = setTimeout(() => once('too-long'), limits.maxDurationMs);
  const stopClocks = () => {
    clearTimeout(tooLong);
    clearTimeout(idleCheck);
  };
  const once = (why: StreamEnd | 'answered') => {
    if (over) return;
    over = true;
    clearTimeout(deadline);
    stopClocks();
    if (why !== 'answered') gone(why);
  };
  call.on('cancelled', () => once(msUntil(call.getDeadline()) <= 0 ? 'deadline' : 'cancelled'));
  const left = msUntil(call.getDeadline());
  if (left !== Infinity) deadline = setTimeout(() => once('deadline'), Math.max(0, left));
  const checkIdle = () => {
    const idleFor = Date.now() - lastMoved;
    if (idleFor >= limits.idleTimeoutMs) {
      if (idle.unread()) return once('unread');
      // A watch with nothing to send is quiet, not idle.
      if (!idle.quietIsFine) return once('idle');
      lastMoved = Date.now();
    }
    idleCheck = setTimeout(checkIdle, limits.idleTimeoutMs - (Date.now() - lastMoved));
  };
  idleCheck = setTimeout(checkIdle, limits.idleTimeoutMs);
  return { isOver: () => over, done: () => once('answered'), moved: () => void (lastMoved = Date.now()), working: stopClocks };
}

/** The status a stream ended by the server (not by its caller) ends with. */
function endOf(why: StreamEnd, method: string, limits: StreamLimits): { code: status; details: string } {
  switch (why) {
    case 'unread':
      return { code: status.RESOURCE_EXHAUSTED, details: `${method}: replies went unread for ${limits.idleTimeoutMs} ms; read them, or call again.` };
    case 'idle':
      return { code: status.DEADLINE_EXCEEDED, details: `${method}: nothing was sent for ${limits.idleTimeoutMs} ms.` };
    case 'too-long':
      return { code: status.UNAVAILABLE, details: `${method}: a stream lasts at most ${limits.maxDurationMs} ms; open a new one.` };
    case 'deadline':
      return { code: status.DEADLINE_EXCEEDED, details: `${method} did not finish before the caller's deadline.` };
    case 'cancelled':
      return { code: status.CANCELLED, details: 'Cancelled by the caller.' };
  }
}

/**
 * Health.Check of the Inventory service asks readiness first: Kubernetes' readiness probe is that
 * Check (deploy/k8s, `grpc` probe of inventory.v1.Inventory), so a replica whose database stops
 * answering turns NOT_SERVING, as /readyz turns 503, and traffic moves away; a watch hears of the
 * change at the next Check (the probe's, every few seconds). '' (the whole server: what the liveness and startup probes ask) follows only the
 * process's stop, so a database outage never restarts the pod.
 */
function checkingReadiness(server: Server, health: HealthImplementation, ready: (() => Promise<boolean>) | undefined): Server {
  if (!ready) return server;
  let current: ServingStatus = 'SERVING';
  return {
    addService(definition: ServiceDefinition, handlers: UntypedServiceImplementation) {
      const check = handlers.check as handleUnaryCall<{ service: string }, unknown>;
      const checkReady: handleUnaryCall<{ service: string }, unknown> = (call, callback) => {
        if (call.request.service !== INVENTORY_SERVICE_NAME) return check(call, callback);
        void ready().then((isReady) => {
          const now: ServingStatus = isReady ? 'SERVING' : 'NOT_SERVING';
          if (now !== current) health.setStatus(INVENTORY_SERVICE_NAME, (current = now));
          check(call, callback);
        });
      };
      server.addService(definition, { ...handlers, check: checkReady });
    },
  } as unknown as Server;
}

type ServingStatus = 'SERVING' | 'NOT_SERVING';

export interface InventoryGrpc {
  server: Server;
  health: HealthImplementation;
  listen(port: number, host?: string): Promise<number>;
  stoppable: Stoppable;
}

export function createInventoryGrpc(options: {
  stock: StockService;
  callers: InventoryCallers;
  logger: Logger;
  registry: Registry;
  limits?: StreamLimits;
  onStop?: () => Promise<void>;
  /** The registry's entries: deprecated RPCs (deprecated-rpcs.ts). */
  deprecations?: readonly Deprecation[];
  usage?: UsageRecorder;
  /** Whether the replica can serve Inventory (service-kit Health's readiness: its database answers); unset: always. */
  ready?: () => Promise<boolean>;
}): InventoryGrpc {
  const { stock, logger } = options;
  const limits = options.limits ?? DEFAULT_STREAM_LIMITS;
  const openStreams = new OpenCalls('streams', limits.maxStreams, limits.maxStreamsPerCaller);
  const openWatchers = new OpenCalls('watchers', limits.maxWatchers, limits.maxWatchersPerCaller);
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
    if (reason instanceof DomainError) {
      const refused = toGrpcStatus(reason);
      if (reason instanceof Unauthenticated || reason instanceof Forbidden) logger.warn({ method, code: status[refused.code] }, 'gRPC call refused: caller not authenticated or not allowed');
      return refused;
    }
    if (reason instanceof DeadlineExceeded) return { code: status.DEADLINE_EXCEEDED, details: `${method} did not finish before the caller's deadline.` };
    if (reason instanceof LimitReached) return { code: status.RESOURCE_EXHAUSTED, details: reason.message };
    // As the HTTP side answers 503 (databaseOutages): a temporary outage the caller may retry
    // (UNAVAILABLE, which orders answers 503 with Retry-After), not a fault of the call (INTERNAL).
    if (isDatabaseUnavailable(reason)) {
      logger.warn({ err: reason, method }, 'gRPC call refused: the database cannot be reached');
      return { code: status.UNAVAILABLE, details: 'Inventory cannot reach its database right now; retry shortly.' };
    }
    logger.error({ err: reason, method }, 'gRPC call failed');
    return { code: status.INTERNAL, details: 'Internal error.' };
  }

  function unary<Req, Res>(method: string, work: (request: Req) => Promise<Res>) {
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      const finish = track(method, 'unary');
      authenticateCall(call.metadata, options.callers)
        .then(() => withinDeadline(call, limits.defaultDeadlineMs, () => work(call.request)))
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

  /** Ends a stream the server gave up on (not its caller), or records how its caller left. */
  function serverEnded(method: string, why: StreamEnd, finish: (code: status) => void, end: (error: { code: status; details: string }) => void): void {
    const ended = endOf(why, method, limits);
    finish(ended.code);
    // A caller that cancelled, or whose deadline passed, is answered by grpc-js itself.
    if (why !== 'cancelled' && why !== 'deadline') end(ended);
  }

  /** The current levels, then every change, until the caller cancels, its deadline passes, or a bound of StreamLimits ends it. */
  function watchStock(call: ServerWritableStream<WatchStockRequest, StockLevel>): void {
    const finish = track('WatchStock', 'server_stream');
    let unwatch: (() => void) | undefined;
    let giveBack: (() => void) | undefined;
    const release = () => {
      unwatch?.();
      giveBack?.();
    };
    const stream = watchStream(call, limits, { unread: () => call.writableLength > 0, quietIsFine: true }, (why) => {
      release();
      serverEnded('WatchStock', why, finish, (error) => call.emit('error', error));
    });
    const end = (code: status, details: string) => {
      if (stream.isOver()) return;
      stream.done();
      release();
      finish(code);
      call.emit('error', { code, details });
    };
    call.on('drain', () => stream.moved());
    const send = (level: StockLevel) => {
      if (stream.isOver()) return;
      if (call.writableLength >= MAX_UNREAD_LEVELS) return end(status.RESOURCE_EXHAUSTED, `More than ${MAX_UNREAD_LEVELS} levels unread; watch again.`);
      messages.inc({ grpc_method: 'WatchStock', direction: 'sent' });
      if (call.write(level)) stream.moved();
    };
    authenticateCall(call.metadata, options.callers)
      .then((caller) => {
        if (stream.isOver()) return () => undefined;
        giveBack = openWatchers.take(caller);
        return stock.watch(parseMessage(watchStockRequest, call.request).skus, send, () => end(status.UNAVAILABLE, 'Inventory is stopping; watch again.'));
      })
      .then(
        (stop) => {
          // The caller may have gone while the first levels were read.
          if (stream.isOver()) stop();
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
    let giveBack: (() => void) | undefined;
    const stream = watchStream(call, limits, { unread: () => false, quietIsFine: false }, (why) => {
      lines = [];
      giveBack?.();
      serverEnded('ReserveOrder', why, finish, (error) => callback(error));
    });
    const answer = (error: { code: status; details: string; metadata?: Metadata } | null, reply?: ReserveOrderReply) => {
      if (stream.isOver()) return;
      stream.done();
      giveBack?.();
      finish(error ? error.code : status.OK);
      callback(error, reply);
    };
    const authenticated = authenticateCall(call.metadata, options.callers).then((caller) => {
      if (!stream.isOver()) giveBack = openStreams.take(caller);
    });
    call.on('data', (line: ReserveLine) => {
      messages.inc({ grpc_method: 'ReserveOrder', direction: 'received' });
      stream.moved();
      // One line past the limit is kept for the schema to refuse the order; the rest are not held.
      if (lines.length <= MAX_LINES) lines.push(line);
    });
    const halfClosed = new Promise<void>((resolve) => call.on('end', resolve));
    authenticated
      .then(() => halfClosed)
      .then(() => {
        if (stream.isOver()) return undefined;
        stream.working();
        return withinDeadline(call, limits.defaultDeadlineMs, async () => stock.reserveOrder(parseMessage(reserveOrderRequest, { lines })));
      })
      .then(
        (reply) => reply && answer(null, { orderId: reply.orderId, reservations: reply.reservations.map((reservation) => ({ ...reservation, error: undefined })) }),
        (reason: unknown) => answer(refusal('ReserveOrder', reason)),
      );
  }

  /**
   * One reply per request, in the order of the requests; a refusal is a reply, not the end. The
   * stream stops reading requests while MAX_IN_FLIGHT are being answered or while its replies
   * wait unread (call.write() said so, until 'drain'): a caller that never reads makes the
   * server hold a bounded number of replies, not every reply to everything it sent.
   */
  function reserveStream(call: ServerDuplexStream<ReserveRequest, ReserveReply>): void {
    const finish = track('ReserveStream', 'bidi_stream');
    let giveBack: (() => void) | undefined;
    const authenticated = authenticateCall(call.metadata, options.callers).then((caller) => {
      if (!stream.isOver()) giveBack = openStreams.take(caller);
    });
    // A refused caller gets no replies: the stream ends with its status (below).
    const allowed = authenticated.then(() => true, () => false);
    let replies: Promise<unknown> = allowed;
    let inFlight = 0;
    let paused = false;
    let unreadReplies = false;
    const stream = watchStream(call, limits, { unread: () => unreadReplies, quietIsFine: false }, (why) => {
      giveBack?.();
      serverEnded('ReserveStream', why, finish, (error) => call.emit('error', error));
    });
    /** Reads requests only while few are being answered and the caller reads its replies. */
    const pace = () => {
      if (!paused && (inFlight >= MAX_IN_FLIGHT || unreadReplies)) {
        paused = true;
        call.pause();
      } else if (paused && inFlight < MAX_IN_FLIGHT / 2 && !unreadReplies) {
        paused = false;
        call.resume();
      }
    };
    call.on('drain', () => {
      unreadReplies = false;
      stream.moved();
      pace();
    });
    const replyTo = (request: ReserveRequest): Promise<ReserveReply> =>
      Promise.resolve(request).then((sent) => stock.reserve(parseMessage(reserveRequest, sent))).then(
        (reservation) => ({ ...reservation, error: undefined }),
        (reason: unknown) => {
          const { code, details } = refusal('ReserveStream', reason);
          return { reservationId: '', sku: request.sku, quantity: 0, remaining: 0, error: { code, message: details } };
        },
      );
    call.on('data', (request: ReserveRequest) => {
      messages.inc({ grpc_method: 'ReserveStream', direction: 'received' });
      stream.moved();
      inFlight += 1;
      pace();
      // Every request starts now (concurrent ones on a SKU share a statement); replies leave in order.
      const reply = allowed.then((yes) => (yes ? replyTo(request) : undefined));
      replies = replies.then(() => reply).then((answer) => {
        inFlight -= 1;
        if (stream.isOver() || !answer) return;
        messages.inc({ grpc_method: 'ReserveStream', direction: 'sent' });
        if (call.write(answer)) stream.moved();
        else unreadReplies = true;
        pace();
      });
    });
    call.on('end', () => {
      void replies.then(() => {
        if (stream.isOver()) return;
        stream.done();
        giveBack?.();
        finish(status.OK);
        call.end();
      });
    });
    authenticated.catch((reason: unknown) => {
      if (stream.isOver()) return;
      stream.done();
      giveBack?.();
      const { code, details } = refusal('ReserveStream', reason);
      finish(code);
      call.emit('error', { code, details });
    });
  }

  const implementation: InventoryServer = {
    reserve: unary<ReserveRequest, ReserveReply>('Reserve', async (request) => ({ ...(await stock.reserve(parseMessage(reserveRequest, request))), error: undefined })),
    release: unary('Release', async (request: { orderId: string }) => ({ releasedCount: await stock.release(parseMessage(releaseRequest, request).orderId) })),
    fulfil: unary('Fulfil', async (request: { orderId: string }) => ({ fulfilledCount: await stock.fulfil(parseMessage(fulfilRequest, request).orderId) })),
    getStock: unary('GetStock', async (request: { skus: string[] }) => ({ levels: await stock.getStock(parseMessage(getStockRequest, request).skus) })),
    setStock: unary('SetStock', async (request: { sku: string; onHand: number; requestId: string }) => ({ level: await stock.setStock(parseMessage(setStockRequest, request)) })),
    // change_reason replaces the deprecated reason (contracts/deprecations.yaml); either is kept, the new one first,
    // and none is empty (a brownout clears the old one before the handler sees it).
    adjustStock: unary('AdjustStock', async (request: { sku: string; delta: number; reason?: string; changeReason?: string; requestId: string }) => ({
      level: await stock.adjustStock(parseMessage(adjustStockRequest, { sku: request.sku, delta: request.delta, requestId: request.requestId, reason: request.changeReason || request.reason || '' })),
    })),
    watchStock,
    reserveOrder,
    reserveStream,
  };

  // Logged first, so a call refused as deprecated has its access-log line too.
  const server = new Server({
    'grpc.keepalive_permit_without_calls': 1,
    // A connection no call uses is closed (a client reconnects on its next call): connections
    // opened and left idle cannot pile up until the process runs out of file descriptors.
    'grpc.max_connection_idle_ms': limits.connectionIdleMs,
    'grpc.max_connection_age_ms': limits.connectionMaxAgeMs,
    // A stream never outlives maxDurationMs: it ends by its own clock (UNAVAILABLE, reopened by
    // its caller), not by the connection being cut under it.
    'grpc.max_connection_age_grace_ms': limits.maxDurationMs,
    interceptors: [logCalls(logger), ...(options.usage ? [recordRpcUsage(options.usage)] : []), deprecatedRpcs(options.deprecations ?? [], logger, options.registry)],
  });
  // Health.Watch and reflection take no token (probes and tools), so nothing names a caller: what
  // one peer address, and all of them, may hold open is bounded, and each stream keeps the clocks
  // of Inventory's (idle, longest life). Without this, one client could open streams until the
  // replica ran out of memory (about 10 KB each).
  const openToAnyone = new OpenCalls('health watches and reflection streams', limits.maxOpenStreams, limits.maxOpenStreamsPerAddress);
  /** `path`: `/grpc.health.v1.Health/Watch`, `/grpc.reflection.v1.ServerReflection/ServerReflectionInfo`. */
  function boundedOpenStream(path: string, handler: (call: ServerWritableStream<unknown, unknown>) => void) {
    return (call: ServerWritableStream<unknown, unknown> & { pause?: () => void; resume?: () => void }) => {
      let giveBack: () => void;
      try {
        giveBack = openToAnyone.take(peerAddressOf(call.getPeer()));
      } catch (error) {
        call.emit('error', { code: status.RESOURCE_EXHAUSTED, details: (error as Error).message });
        return;
      }
      // The slot is held until the call is over: grpc-js says 'cancelled' once its status has
      // gone out or its caller cancelled, and 'close' when the stream is destroyed; not when the
      // server merely decides to end it (its status may wait behind replies the caller has not read).
      let announcing = false;
      call.on('cancelled', () => announcing || giveBack());
      call.once('close', () => giveBack());
      // Reflection answers every request it reads: past the replies a caller leaves unread (the
      // stream's high-water mark), it reads no more requests until they drain, so HTTP/2 flow
      // control stops the caller instead of the replies piling up here. Nothing is written once
      // the stream is ending.
      const write = call.write.bind(call) as (message: unknown) => boolean;
      call.write = ((message: unknown) => {
        if (call.writableEnded || call.destroyed) return false;
        const written = write(message);
        if (!written) call.pause?.();
        return written;
      }) as typeof call.write;
      // A health watch with no change to send is quiet, not idle; a reflection stream is idle.
      const stream = watchStream(call, limits, { unread: () => call.writableLength > 0, quietIsFine: path.endsWith('/Watch') }, (why) => {
        if (why === 'cancelled' || why === 'deadline') return;
        call.pause?.();
        call.removeAllListeners('data');
        // The handlers let go of a call when it is cancelled (the health checker's list of
        // watchers): tell them, then end it with the bound's status.
        announcing = true;
        call.emit('cancelled', 'ended by the server');
        announcing = false;
        call.emit('error', endOf(why, path, limits));
      });
      call.on('drain', () => {
        call.resume?.();
        stream.moved();
      });
      call.on('data', () => stream.moved());
      call.once('finish', () => stream.done());
      handler(call);
    };
  }
  /** Registers a service's handlers with its streaming ones bounded as above. */
  const withOpenStreamsBounded = {
    addService(definition: ServiceDefinition, handlers: UntypedServiceImplementation) {
      const bounded = Object.fromEntries(
        Object.entries(handlers).map(([name, handler]) => {
          const method = Object.values(definition).find((candidate) => candidate.originalName === name || candidate.path.toLowerCase().endsWith(`/${name.toLowerCase()}`));
          return [name, method?.responseStream ? boundedOpenStream(method.path, handler as (call: ServerWritableStream<unknown, unknown>) => void) : handler];
        }),
      );
      server.addService(definition, bounded);
    },
  } as unknown as Server;

  server.addService(InventoryService, implementation);
  const health = new HealthImplementation({ '': 'SERVING', [INVENTORY_SERVICE_NAME]: 'SERVING' });
  // Once the stop began, nothing turns the server SERVING again.
  let stopping = false;
  const ready = options.ready;
  health.addToServer(checkingReadiness(withOpenStreamsBounded, health, ready && (async () => !stopping && (await ready()))));
  // Reflection describes both services, so tools such as `buf curl` and grpcurl need no local
  // proto files. It serves buf's descriptors: the ones proto-loader rebuilds are malformed.
  // @grpc/reflection reads only `fileDescriptorProtos` of the definitions it is given.
  new ReflectionService({ descriptors: { fileDescriptorProtos: fileDescriptorProtos() } } as unknown as PackageDefinition).addToServer(withOpenStreamsBounded);

  return {
    server,
    health,
    listen: (port, host = '0.0.0.0') =>
      new Promise((resolve, reject) => server.bindAsync(`${host}:${port}`, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)))),
    stoppable: {
      close: async () => {
        stopping = true;
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
