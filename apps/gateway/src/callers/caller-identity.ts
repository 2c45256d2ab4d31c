// Who a request came from, for usage records (spec §Authentication 4: "identifiable by a client
// name and version in User-Agent, or by an issued key"). In order: the issued key, the token's
// subject, the X-Client-Name/X-Client-Version headers, the User-Agent's product/version, else
// `unidentified`; the client name/version is recorded beside whichever it is. Header values are
// believed only in a bounded shape, so no client can put arbitrary text (or tabs) in the store.
import type { Request, Response } from 'express';
import type { CallerIdentity } from '@platform/usage';

/** A product name: a letter, then letters, digits, `.`, `_`, `-`; at most 40. */
const NAME_SHAPE = /^[A-Za-z][\w.-]{0,39}$/;
/** A version: up to four numeric parts, an optional pre-release or build tag. */
const VERSION_SHAPE = /^\d{1,6}(?:\.\d{1,6}){0,3}(?:[-+][\w.]{1,20})?$/;
/** `name/1.2.3` at the start of a User-Agent. */
const USER_AGENT_SHAPE = /^([A-Za-z][\w.-]{0,39})\/(\d{1,6}(?:\.\d{1,6}){0,3})(?![\w.-])/;

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value.trim() : undefined;
}

/** The client's name/version from X-Client-Name/-Version, else the User-Agent's product/version; undefined when neither has the shape. */
export function clientOf(req: Request): string | undefined {
  const name = header(req, 'x-client-name');
  if (name !== undefined && NAME_SHAPE.test(name)) {
    const version = header(req, 'x-client-version');
    return version !== undefined && VERSION_SHAPE.test(version) ? `${name}/${version}` : name;
  }
  const product = USER_AGENT_SHAPE.exec(header(req, 'user-agent') ?? '');
  return product ? `${product[1]}/${product[2]}` : undefined;
}

/** The caller of a request whose authentication ran (res.locals.apiKey, res.locals.principal). */
export function callerIdentityOf(req: Request, res: Response): CallerIdentity {
  const client = clientOf(req);
  const { apiKey, principal } = res.locals;
  if (apiKey) return { caller: `key:${apiKey.id}`, client: client ?? 'unknown', owner: `user:${apiKey.ownerId}` };
  if (principal) return { caller: `${principal.role === 'service' ? 'service' : 'user'}:${principal.userId}`, client: client ?? 'unknown' };
  if (client) return { caller: `client:${client}`, client };
  return { caller: 'unidentified', client: 'unknown' };
}
