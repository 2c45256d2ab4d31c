// Identifiers and keys, by where they are sent. In a body or a query, an id is input: a UUID
// string, or a 422 INVALID_FORMAT on its field (`idField`). In a path, or as the id a GraphQL
// field looks up, it names a resource: one that is no id names nothing, and is answered as an
// unknown one is, 404 (`pathId`, `pathKey`; an endpoint declares its path's parameters with
// `resourceId`, `resourceKey` or `writtenKey`, and its route checks them before the handler runs).
import { NotFound } from '@platform/errors';
import { canonicalId, isId } from '@platform/ids';
import { z } from 'zod';

/** What a value idField refuses is told: any case is read, so the message names none. */
const ID_CHECK_MESSAGE = 'must be an id this API issued (a UUID, version 7; upper or lower case)';

/**
 * An id as a client sends it: a UUID is case-insensitive on input (RFC 9562 §4), so any case is
 * read, and kept lowercase, the form the API stores and answers (isId's canonical form), so the
 * same resource is found, compared (an owner's id) and echoed (ids, Location) whatever the case sent.
 * The message is also the check's name in the published document (`x-checks`): it names the
 * wording it was released under (`formerly`), so contract:check sees the same check reworded.
 */
export const idField = () =>
  z
    .string()
    .overwrite(canonicalId)
    .refine(isId, { message: ID_CHECK_MESSAGE, params: { code: 'INVALID_FORMAT', check: { formerly: ['must be an id this API issued (a lowercase UUID, version 7)'] } } })
    .meta({ format: 'uuid' });

/**
 * The key a path names, if it can name anything: a value `rule` refuses names nothing that can
 * exist, so it is `what` not found (NotFound, 404), as an unknown key is, never invalid input
 * (422), and no store is asked about it (a uuid column would refuse it with an error of its own).
 */
export function pathKey(rule: z.ZodType<string, string>, value: string, what: string, keys: readonly string[] = []): string {
  return keyOrNotFound(rule, value, () => NotFound.of(what, keys));
}

/** `value` as `rule` keeps it, or the NotFound `notFound` gives: the one check behind pathKey and parsePath. */
function keyOrNotFound(rule: z.ZodType<string, string>, value: string, notFound: () => NotFound): string {
  const checked = rule.safeParse(value);
  if (!checked.success) throw notFound();
  return checked.data;
}

const anId = idField();

/** The id a path names (`/orders/{id}`, GraphQL's `order(id:)`): one that is not an id (a UUID) is `what` not found. */
export function pathId(value: string, what: string): string {
  return pathKey(anId, value, what);
}

/**
 * A path parameter as an endpoint declares it (libs/endpoints): the rule its values keep, and the
 * answer to a value the rule refuses. A path names a resource, so such a value names nothing:
 * `notFound` (404, the answer an unknown one gets), given by the route before the handler runs.
 * A key the request writes (PUT /stock-levels/{sku} creates the SKU) is input instead: it has no
 * `notFound`, the route passes it on, and the handler refuses a bad one with the rest of what it
 * writes (422), all at once.
 */
export interface PathParameter {
  readonly rule: z.ZodType<string, string>;
  readonly notFound?: (value: string) => NotFound;
}

/** A path parameter naming a resource by `rule`: a value it refuses is `what` not found, or the NotFound `what` gives for it. */
export function resourceKey(rule: z.ZodType<string, string>, what: string | ((value: string) => NotFound)): PathParameter {
  return { rule, notFound: typeof what === 'string' ? () => NotFound.of(what) : what };
}

/** A path parameter that is the id of `what` (`/orders/{id}`): a value that is no id (a UUID) is `what` not found. */
export const resourceId = (what: string): PathParameter => resourceKey(idField(), what);

/** A key the request writes (a PUT that creates): documented by `rule`, checked by the handler with the rest of its input. */
export const writtenKey = (rule: z.ZodType<string, string>): PathParameter => ({ rule });

/**
 * The path's values, checked against the declared parameters: the first one that names nothing
 * is thrown as its NotFound. A written key is passed on as sent.
 */
export function parsePath(parameters: Readonly<Record<string, PathParameter>>, values: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(parameters).map(([name, { rule, notFound }]) => {
      const value = values[name];
      return [name, notFound ? keyOrNotFound(rule, value, () => notFound(value)) : value];
    }),
  );
}
