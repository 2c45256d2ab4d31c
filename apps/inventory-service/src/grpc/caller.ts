// Who made a gRPC call, named as the REST side names its callers (the gateway's usage records,
// a service's principal): `service:<subject>` once the call's service token was verified, else
// `client:<product>/<version>` from its User-Agent. Every Inventory handler verifies the token
// first (authenticateCall); the access log and the usage records, server interceptors that see
// the call's metadata before the handler and its status after it, name the caller by what the
// handler verified, never by a token they read unchecked.
import type { Metadata } from '@grpc/grpc-js';
import type { TokenVerifier } from '@platform/auth';
import { Forbidden, Unauthenticated } from '@platform/errors';

export interface InventoryCallers {
  /** Verifies service tokens (the internal audience). */
  verifier: TokenVerifier;
  /** Service names allowed to call Inventory. */
  allowed: readonly string[];
}

/** The verified token subject of each call, by the call's metadata (one object from the interceptors to the handler). */
const verifiedSubjects = new WeakMap<Metadata, string>();

/**
 * Verifies the call's service token and answers its subject; Unauthenticated without a valid one,
 * Forbidden for a service not allowed (still named in the log: its token was valid).
 */
export async function authenticateCall(metadata: Metadata, callers: InventoryCallers): Promise<string> {
  const header = metadata.get('authorization')[0];
  let caller: string;
  try {
    caller = (await callers.verifier.verifyHeader(typeof header === 'string' ? header : undefined)).userId;
  } catch {
    throw new Unauthenticated('Send a valid service token: authorization: Bearer <token>.');
  }
  verifiedSubjects.set(metadata, caller);
  if (!callers.allowed.includes(caller)) throw new Forbidden(`${caller} may not call inventory.`);
  return caller;
}

/** `name/1.2.3` at the start of a User-Agent (grpc-js sends `grpc-node-js/1.14.7`). */
const USER_AGENT_PRODUCT = /^([A-Za-z][\w.-]{0,39})\/(\d{1,6}(?:\.\d{1,6}){0,3})(?![\w.-])/;

/** The calling client's product/version from User-Agent, or `unknown`. */
export function clientOf(metadata: Metadata): string {
  const product = USER_AGENT_PRODUCT.exec(metadata.get('user-agent')[0]?.toString() ?? '');
  return product ? `${product[1]}/${product[2]}` : 'unknown';
}

/** The caller once its handler verified its token (`service:<subject>`), else by its User-Agent (`client:<product>/<version>`), else undefined. */
export function verifiedCallerOf(metadata: Metadata): string | undefined {
  const subject = verifiedSubjects.get(metadata);
  if (subject !== undefined) return `service:${subject}`;
  const client = clientOf(metadata);
  return client === 'unknown' ? undefined : `client:${client}`;
}

/** The subject a bearer token claims, read without checking its signature. */
function claimedSubjectOf(authorization: string | undefined): string | undefined {
  const payload = authorization?.replace(/^Bearer\s+/i, '').split('.')[1];
  if (!payload) return undefined;
  try {
    const subject = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
    return typeof subject === 'string' && /^[\w.-]{1,64}$/.test(subject) ? subject : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The caller a call claims to be, for a warning logged before any handler could verify it (a
 * deprecated RPC refused at the door): `service:<subject>` as its token says, unverified, so an
 * operator can reach the team; and its client.
 */
export function claimedCallerOf(metadata: Metadata): { caller: string; client: string } {
  const subject = claimedSubjectOf(metadata.get('authorization')[0]?.toString());
  return { caller: subject ? `service:${subject}` : 'unidentified', client: clientOf(metadata) };
}
