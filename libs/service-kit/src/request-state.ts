// What the request pipeline of every app leaves on a response (express's res.locals), typed.
import type { Span } from '@platform/tracing';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- express types res.locals through this global namespace
  namespace Express {
    interface Locals {
      /** The request's server span, renamed after its route once known (requestLog). */
      span?: Span;
      /** The route's pattern, for apps that route without express routes (logs and metrics). */
      routePattern?: string;
    }
  }
}
