// What the gateway's pipeline leaves on a response for the steps after it (express's res.locals), typed,
// and the one reading of the forwarded body the steps share.
import type { Request, Response } from 'express';
import { type ForwardedJson, readForwardedJson } from '@platform/service-kit';
import type { CompiledRoute } from './routing/router';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace -- express types res.locals through this global namespace
  namespace Express {
    interface Locals {
      /** The route table's entry for the request (routeRequest). */
      route?: CompiledRoute;
      /** Why the token was refused, thrown only if the route needs one (identifyCaller runs for every route). */
      authError?: unknown;
      /** The API version the path named (none for the unversioned `/graphql` alias). */
      apiVersion?: string;
      /** Who the rate limits count: `user:<id>` (a token's user, a key's owner) or `ip:<address>`. */
      caller?: string;
      /** The issued API key the request came with, once verified (auth/api-keys.ts). */
      apiKey?: { id: string; ownerId: string; scopes: string[] };
      /** The request body, read whole (receiveBody, or the token route's rate limit), forwarded as it came. */
      forwardBody?: Buffer;
      /** forwardBody as the service will read it, or its refusal, once read (forwardedJson). */
      forwardJson?: ForwardedJson;
    }
  }
}

/**
 * The received body as the service will read it (readForwardedJson: its charset, a byte-order
 * mark), read once per request whichever step asks first (the account guard, the key revocation,
 * deprecated body fields, usage); its `refusal` (the service's) when it cannot be read so.
 */
export function forwardedJson(req: Request, res: Response): ForwardedJson {
  res.locals.forwardJson ??= readForwardedJson(res.locals.forwardBody, req.headers['content-type']);
  return res.locals.forwardJson;
}
