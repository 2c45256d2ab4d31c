// Clean stop on SIGTERM/SIGINT: readiness fails, the listener closes after a drain delay,
// in-flight requests finish (bounded), keep-alive sockets close, then resources close.
// Node's own http.Server does the draining (`close` + `closeIdleConnections`); what it does not do
// is tell a client that keeps its connection busy to stop reusing it (`Connection: close`).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Health } from './health';

export interface Stoppable {
  /** The stop has begun: from now on, answers end their connections, so clients move to another replica. */
  drain?(): void;
  /** Stop accepting and resolve when in-flight work is done. */
  close(): Promise<void>;
  /** Cut what is left after the timeout. */
  forceClose?(): void;
}

export function stoppableHttpServer(server: Server): Stoppable {
  // The open connections, to reach the answer each is writing when the stop begins. Counted per
  // connection, not per request: nothing is added to a request's path. Made with the server
  // (runService, the gateway's main.ts), so it follows every connection from the first.
  const connections = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  /** Tells the client of this answer to send its next request on a new connection (to another replica): this one closes after it. */
  const lastOnItsConnection = (res: ServerResponse | undefined) => {
    if (res && !res.headersSent) res.setHeader('connection', 'close');
  };
  let draining = false;
  // A client that keeps its connection busy (another service's event consumer long-polling, the
  // gateway's pooled calls, any client behind a Kubernetes Service, which balances connections,
  // not requests) would otherwise send its next request on it as soon as an answer ends: the
  // readiness drain would not move it, the connection would never turn idle, and the stop would
  // wait for its timeout, then cut whatever is in flight. So every answer from the stop on, those
  // already being prepared and those of requests still arriving on open connections, closes its
  // connection.
  const drain = () => {
    if (draining) return;
    draining = true;
    // (A client pipelining requests behind the one in flight would lose their answers; undici,
    // Node's agent, browsers and HAProxy do not pipeline.)
    for (const socket of connections) lastOnItsConnection((socket as Socket & { _httpMessage?: ServerResponse })._httpMessage);
    const onRequest = (_req: IncomingMessage, res: ServerResponse) => lastOnItsConnection(res);
    server.prependListener('request', onRequest);
    // A request with Expect arrives as checkContinue or checkExpectation (listen.ts answers both), not request.
    server.prependListener('checkContinue', onRequest);
    server.prependListener('checkExpectation', onRequest);
  };
  return {
    drain,
    close: () =>
      new Promise<void>((resolve) => {
        drain();
        // Keep-alive sockets of in-flight requests turn idle when their response ends; close
        // them as they do, instead of holding the stop until the idle timeout.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
    forceClose: () => server.closeAllConnections(),
  };
}

export interface GracefulStopOptions {
  logger: Logger;
  health: Health;
  listeners: Stoppable[];
  /** Closed after the listeners: database clients, Redis, timers. */
  resources?: (() => Promise<void>)[];
  drainMs: number;
  timeoutMs: number;
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stops everything in order; resolves when done. Safe to call twice. */
export function createStopper(options: GracefulStopOptions): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      options.health.markStopping();
      for (const listener of options.listeners) listener.drain?.();
      options.logger.info({ drainMs: options.drainMs }, 'stopping: readiness now fails');
      if (options.drainMs > 0) await wait(options.drainMs);
      const closed = Promise.all(options.listeners.map((listener) => listener.close()));
      const timer = setTimeout(() => {
        options.logger.warn('in-flight requests did not finish in time; closing their connections');
        for (const listener of options.listeners) listener.forceClose?.();
      }, options.timeoutMs);
      await closed;
      clearTimeout(timer);
      for (const close of options.resources ?? []) {
        await close().catch((error: unknown) => options.logger.error({ err: error }, 'error while closing a resource'));
      }
      options.logger.info('stopped');
    })();
    return stopping;
  };
}

/** Wires SIGTERM and SIGINT to the stopper; a second signal exits at once. */
export function stopOnSignals(stop: () => Promise<void>, logger: Logger): void {
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) process.exit(1);
    logger.info({ signal }, 'signal received');
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
