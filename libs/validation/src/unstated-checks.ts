// The checks a schema makes that JSON Schema cannot state: zod's refine and superRefine (a list
// naming each product once, a delta that is not 0, text of at most 64 UTF-16 units). The OpenAPI
// document lists them under CHECKS_EXTENSION, by their messages, so that a client reads what
// its requests must also satisfy and the contract gate sees a check added to a request, which
// refuses what old clients send (tools/contracts/openapi-diff.ts).
import type { z } from 'zod';

export const CHECKS_EXTENSION = 'x-checks';

/** How a check without a message (a superRefine, a refine given none) is listed: adding one still shows. */
export const UNNAMED_CHECK = 'a check this document does not state';

/** How one version of a check differs from the one before it: it takes less (tighter) or more (looser). */
export type CheckChange = 'tighter' | 'looser';

/**
 * What a check declares of itself in its refine's `params.check`, when its function changes under
 * the same message (`n < 100` made `n < 10`, still "too large"): its version (1 when it declares
 * none), and for each version after the first how it differs from the one before. The contract
 * gate cannot read a function, so this is how it learns that a check got stricter:
 * `.refine(fn, { message: 'too large', params: { code: 'OUT_OF_RANGE', check: { version: 2, history: { 2: 'tighter' } } } })`.
 */
export interface CheckRevision {
  version: number;
  history?: Record<number, CheckChange>;
}

/**
 * The messages a check was listed under before, when only its message changed (reworded, the
 * function the same): `params: { check: { formerly: ['must be an id (a UUID)'] } }`. The gate
 * then compares it with the check listed under one of them, as the same check, and asks for a
 * changelog entry as for a changed description, instead of seeing one check dropped and another added.
 */
export interface CheckRewording {
  formerly: string[];
}

/** A check as the document lists it: its message, or with a declared revision or former messages the message and those. */
export type ListedCheck = string | ({ message: string } & Partial<CheckRevision> & Partial<CheckRewording>);

interface CheckDefinition {
  check?: string;
  error?: unknown;
  params?: { check?: unknown };
}

/** The message a refine was given (`{ message }` or a string), if any: zod keeps it as a function of the issue. */
function messageOf(definition: CheckDefinition): string | undefined {
  const error = typeof definition.error === 'function' ? (definition.error as (issue: object) => unknown)({}) : definition.error;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
  return undefined;
}

/**
 * What a check declares of itself (params.check), the well-formed parts: a revision (a version
 * above 1, each history entry tighter or looser) and the messages it was listed under before.
 */
function declarationOf(definition: CheckDefinition): (Partial<CheckRevision> & Partial<CheckRewording>) | undefined {
  const declared = definition.params?.check as { version?: unknown; history?: unknown; formerly?: unknown } | undefined;
  if (typeof declared !== 'object' || declared === null) return undefined;
  const formerly = Array.isArray(declared.formerly) ? declared.formerly.filter((message): message is string => typeof message === 'string') : [];
  const versioned = typeof declared.version === 'number' && Number.isInteger(declared.version) && declared.version >= 2;
  if (!versioned && formerly.length === 0) return undefined;
  const history = typeof declared.history === 'object' && declared.history !== null ? Object.fromEntries(Object.entries(declared.history).filter(([, change]) => change === 'tighter' || change === 'looser')) : {};
  return { ...(versioned ? { version: declared.version as number, history } : {}), ...(formerly.length > 0 ? { formerly } : {}) };
}

/** The unstated checks of `schema` itself (not of the schemas inside it): by their messages, with the revision a check declares. */
export function unstatedChecksOf(schema: z.core.$ZodType): ListedCheck[] {
  const checks = (schema._zod.def.checks ?? []).map((check) => check._zod.def as CheckDefinition);
  return checks
    .filter((definition) => definition.check === 'custom')
    .map((definition) => {
      const message = messageOf(definition) ?? UNNAMED_CHECK;
      const declared = declarationOf(definition);
      return declared ? { message, ...declared } : message;
    });
}
