// The checks a schema makes that JSON Schema cannot state: zod's refine and superRefine (a list
// naming each product once, a delta that is not 0, text of at most 64 UTF-16 units). The OpenAPI
// document lists them under CHECKS_EXTENSION, by their messages, so that a client reads what
// its requests must also satisfy and the contract gate sees a check added to a request, which
// refuses what old clients send (tools/contracts/openapi-diff.ts).
import type { z } from 'zod';

export const CHECKS_EXTENSION = 'x-checks';

/** How a check without a message (a superRefine, a refine given none) is listed: adding one still shows. */
export const UNNAMED_CHECK = 'a check this document does not state';

interface CheckDefinition {
  check?: string;
  error?: unknown;
}

/** The message a refine was given (`{ message }` or a string), if any: zod keeps it as a function of the issue. */
function messageOf(definition: CheckDefinition): string | undefined {
  const error = typeof definition.error === 'function' ? (definition.error as (issue: object) => unknown)({}) : definition.error;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
  return undefined;
}

/** The unstated checks of `schema` itself (not of the schemas inside it), by their messages. */
export function unstatedChecksOf(schema: z.core.$ZodType): string[] {
  const checks = (schema._zod.def.checks ?? []).map((check) => check._zod.def as CheckDefinition);
  return checks.filter((definition) => definition.check === 'custom').map((definition) => messageOf(definition) ?? UNNAMED_CHECK);
}
