// What authentication leaves on a response for the handlers after it (express's res.locals), typed.
import type { Principal } from './tokens';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- express types res.locals through this global namespace
  namespace Express {
    interface Locals {
      /** The verified caller; unset until authentication ran, or when the request carried no valid token. */
      principal?: Principal;
    }
  }
}
