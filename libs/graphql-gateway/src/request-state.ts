// What the GraphQL handlers leave on a response (express's res.locals), typed.
import type { OperationFacts } from './operation-metrics';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- express types res.locals through this global namespace
  namespace Express {
    interface Locals {
      /** The operation that ran, for its metrics and its log line. */
      graphqlOperation?: OperationFacts;
    }
  }
}
