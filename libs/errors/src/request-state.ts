// What the error handler reads and leaves on a response (express's res.locals), typed. It is the
// lowest library every app has, so the trace id that every later step reads is declared here.
export {};

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- express types res.locals through this global namespace
  namespace Express {
    interface Locals {
      /** The request's trace id (service-kit's requestContext), echoed in error bodies. */
      traceId?: string;
      /** The cause behind a 5xx, for the log line; never sent to the client. */
      errorCause?: unknown;
    }
  }
}
