// Identifiers and keys, by where they are sent. In a body or a query, an id is input: a UUID
// string, or a 422 INVALID_FORMAT on its field (`idField`). In a path, or as the id a GraphQL
// field looks up, it names a resource: one that is no id names nothing, and is answered as an
// unknown one is, 404 (`pathId`, `pathKey`).
import { NotFound } from '@platform/errors';
import { isId } from '@platform/ids';
import { z } from 'zod';

export const idField = () => z.string().refine(isId, { message: 'must be an id (a UUID)', params: { code: 'INVALID_FORMAT' } }).meta({ format: 'uuid' });

/**
 * The key a path names, if it can name anything: a value `rule` refuses names nothing that can
 * exist, so it is `what` not found (NotFound, 404), as an unknown key is, never invalid input
 * (422), and no store is asked about it (a uuid column would refuse it with an error of its own).
 */
export function pathKey(rule: z.ZodType<string, string>, value: string, what: string, keys: readonly string[] = []): string {
  if (!rule.safeParse(value).success) throw NotFound.of(what, keys);
  return value;
}

const anId = idField();

/** The id a path names (`/orders/{id}`, GraphQL's `order(id:)`): one that is not an id (a UUID) is `what` not found. */
export function pathId(value: string, what: string): string {
  return pathKey(anId, value, what);
}
