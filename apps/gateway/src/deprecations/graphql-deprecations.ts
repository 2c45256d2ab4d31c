// The registry's GraphQL elements against what an operation selects (selectedElements, computed
// once per document): an operation that selects a deprecated field or argument, or writes a
// deprecated enum value, is answered with the deprecation headers. In a brownout or past the
// sunset, a deprecated output field is left out as GraphQL clients expect of a field: null, with an
// error whose extensions.code is GONE at its path, the rest of the operation answering (null goes
// up past a non-null field, per GraphQL). A deprecated argument or enum value is input, like a
// REST body field: the whole operation is refused with GONE (the GraphQL error mapping of
// libs/graphql-kit: 200 with `errors`). The schema itself says it with @deprecated(reason:).
import type { Request, Response } from 'express';
import type { ApiError } from '@platform/errors';
import type { LeftOutField, SelectedElements } from '@platform/graphql-gateway';
import { covers, deprecationHeaders, type Deprecation, goneMessage, phaseAt } from '@platform/deprecations';
import type { DeprecationOutcomes } from './deprecation-outcomes';

/** Undefined when the registry has no GraphQL entry: operations are then not even looked at. */
export function graphqlDeprecations(entries: readonly Deprecation[], outcomes: DeprecationOutcomes) {
  const graphqlEntries = entries.filter((entry) => entry.element.startsWith('graphql:'));
  if (graphqlEntries.length === 0) return undefined;
  /** Keyed by selectedElements' own cached array: one matching per document, not per request. */
  const matched = new WeakMap<readonly string[], Deprecation[]>();
  return (
    selection: SelectedElements,
    req: Request,
    res: Response,
  ): { refusal?: ApiError; leaveOut?: ReadonlyMap<string, LeftOutField> } | undefined => {
    const { elements, outputFields, rootFields } = selection;
    // A HEAD gets its GET's headers (and its GET's answer is computed, for its length) but its
    // caller reads no field: as a REST HEAD counts no response field (rest-deprecations.ts) and
    // usage records none (graphqlUsageOf), only its root fields, the operation's entry points as a
    // REST route is, are counted; its arguments and enum values are input, judged as for GET.
    const head = req.method === 'HEAD';
    let used = matched.get(elements);
    if (!used) matched.set(elements, (used = graphqlEntries.filter((entry) => elements.some((element) => covers(entry.element, element)))));
    if (used.length === 0) return undefined;
    // An entry naming an output field itself covers that field (and its arguments): it is left out, not refused.
    const fields = used.filter((entry) => outputFields.has(entry.element));
    const { refusal } = outcomes.judge(
      req,
      res,
      used.filter((entry) => !outputFields.has(entry.element)),
    );
    if (refusal) return { refusal };
    const now = new Date();
    const leaveOut = new Map<string, LeftOutField>();
    for (const entry of fields) {
      const phase = phaseAt(entry, now);
      if (phase === 'brownout' || phase === 'sunset') leaveOut.set(entry.element, { message: goneMessage(entry, phase, now), code: 'GONE' });
      if (!head || rootFields.has(entry.element)) outcomes.record(req, res, entry, phase === 'deprecated' ? 'warned' : phase === 'dry-run' ? 'dry_run' : phase);
    }
    for (const [name, value] of Object.entries(deprecationHeaders(used))) res.setHeader(name, value);
    return leaveOut.size > 0 ? { leaveOut } : undefined;
  };
}
