import { refusalOf } from '@platform/validation';

export type SortDirection = 'asc' | 'desc';
export interface Sort<F extends string = string> {
  field: F;
  direction: SortDirection;
}

/**
 * Reads `field,desc`, `field,asc`, `field` or `-field` (leading minus is descending). A field
 * outside `allowed` is refused with 400: sorting on an unindexed column is a denial of service.
 */
export function parseSort<F extends string>(value: string | undefined, allowed: readonly F[], fallback: Sort<F>): Sort<F> {
  if (value === undefined || value === '') return fallback;
  let field = value;
  let direction: SortDirection = 'asc';
  const comma = value.split(',');
  if (comma.length === 2) {
    field = comma[0];
    const dir = comma[1].toLowerCase();
    if (dir !== 'asc' && dir !== 'desc') throw sortError(`Sort direction must be asc or desc, not '${comma[1]}'.`);
    direction = dir;
  } else if (comma.length > 2) {
    throw sortError('Sort takes one field: field,desc or -field.');
  } else if (value.startsWith('-')) {
    field = value.slice(1);
    direction = 'desc';
  }
  if (!(allowed as readonly string[]).includes(field)) {
    throw sortError(`Cannot sort by '${field}'. Sortable fields: ${allowed.join(', ')}.`);
  }
  return { field: field as F, direction };
}

/**
 * The OpenAPI extension naming a `sort` parameter's fields. The contract gate reads it to tell a
 * sort field added (safe) from one removed (breaking), which the pattern alone cannot show.
 */
export const SORT_FIELDS_EXTENSION = 'x-sort-fields';

/** The pattern of every value `parseSort` accepts for `fields` (what the OpenAPI document publishes). */
export function sortPattern(fields: readonly string[]): string {
  const names = fields.join('|');
  return `^(?:-?(?:${names})|(?:${names}),(?:[aA][sS][cC]|[dD][eE][sS][cC]))$`;
}

/** A sort the list does not offer: unreadable as sent, like an unknown parameter. */
function sortError(message: string) {
  return refusalOf([{ field: 'sort', code: 'NOT_ALLOWED', message }], { message: 'The sort parameter is not allowed.', unreadable: true });
}
