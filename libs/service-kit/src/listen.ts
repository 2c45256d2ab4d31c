import { createServer, IncomingMessage, type RequestListener, type Server, type ServerOptions, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** What an express application exposes: the prototypes it gives every request and response. */
interface PrototypeSwappingApp {
  request: object;
  response: object;
}

function isExpressApp(handler: RequestListener): handler is RequestListener & PrototypeSwappingApp {
  const candidate = handler as Partial<PrototypeSwappingApp>;
  return typeof candidate.request === 'object' && typeof candidate.response === 'object';
}

/**
 * Express re-parents every request and response (`Object.setPrototypeOf`) onto its own
 * prototypes. Changing an object's prototype after Node's HTTP code has handled it sends V8 down
 * slow paths for the rest of the exchange: about 140 µs of CPU per request here, more than the
 * whole proxy hop costs. Node lets a server construct its requests and responses from given
 * classes, so they are born with the app's prototypes; express's `setPrototypeOf` then finds the
 * prototype already in place and changes nothing. Measured in docs/benchmarks.md.
 */
function bornWithPrototypesOf(app: PrototypeSwappingApp): Pick<ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  // Node's constructors are plain functions (20, 22 and 24): ours call them on an object whose
  // prototype is the app's own. Were they ever classes, `.call` would throw: keep Node's then.
  if ([IncomingMessage, ServerResponse].some((constructor) => Function.prototype.toString.call(constructor).startsWith('class'))) return {};
  function AppRequest(this: IncomingMessage, socket: ConstructorParameters<typeof IncomingMessage>[0]) {
    IncomingMessage.call(this, socket);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, request: IncomingMessage, options?: unknown) {
    (ServerResponse as unknown as (this: ServerResponse, request: IncomingMessage, options?: unknown) => void).call(this, request, options);
  }
  AppResponse.prototype = app.response;
  return { IncomingMessage: AppRequest as unknown as typeof IncomingMessage, ServerResponse: AppResponse as unknown as typeof ServerResponse };
}

/** Listens on `port` (0: any free port). Keep-alive outlives typical load balancer idle timeouts. */
export async function listen(handler: RequestListener, port: number, host = '0.0.0.0'): Promise<Listening> {
  const server = createServer({ keepAliveTimeout: 65_000, ...(isExpressApp(handler) ? bornWithPrototypesOf(handler) : {}) }, handler);
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    server,
    port: bound,
    url: `http://127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
