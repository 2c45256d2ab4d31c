// The registry's GraphQL elements against what an operation selects (selectedElements, computed
// once per document): an operation that selects a deprecated field or argument, or writes a
// deprecated enum value, is answered with the deprecation headers; in a brownout or past the sunset
// it is refused with a GraphQL error whose extensions.code is GONE (the GraphQL error mapping of
// libs/graphql-kit: 200 with `errors`). The schema itself says it with @deprecated(reason:).
import type { Request, Response } from 'express';
import type { ApiError } from '@platform/errors';
import { covers, deprecationHeaders, type Deprecation } from '@platform/deprecations';
import type { DeprecationOutcomes } from './deprecation-outcomes';

/** Undefined when the registry has no GraphQL entry: operations are then not even looked at. */
export function graphqlDeprecations(entries: readonly Deprecation[], outcomes: DeprecationOutcomes) {
  const graphqlEntries = entries.filter((entry) => entry.element.startsWith('graphql:'));
  if (graphqlEntries.length === 0) return undefined;
  /** Keyed by selectedElements' own cached array: one matching per document, not per request. */
  const matched = new WeakMap<readonly string[], Deprecation[]>();
  return (elements: readonly string[], req: Request, res: Response): ApiError | undefined => {
    let used = matched.get(elements);
    if (!used) matched.set(elements, (used = graphqlEntries.filter((entry) => elements.some((element) => covers(entry.element, element)))));
    if (used.length === 0) return undefined;
    const { refusal } = outcomes.judge(req, res, used);
    if (refusal) return refusal;
    for (const [name, value] of Object.entries(deprecationHeaders(used))) res.setHeader(name, value);
    return undefined;
  };
}
