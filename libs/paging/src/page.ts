// One paging implementation for every list: cursor (keyset, the default), page+size, or
// offset+limit. Whatever the style, the response carries a keyset `nextCursor`.
import { ApiError } from '@platform/errors';
import { int32, queryBoolean, queryInt, refusalOf, z } from '@platform/validation';
import { type CursorValue, decodeCursor, encodeCursor, scopeOf } from './cursor';
import type { Sort } from './sort';
import { TOTAL_ESTIMATED_HEADER, type TotalCount } from './total';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** Paging parameters of a query string; spread into a list's `z.strictObject`. */
export const pagingQueryShape = {
  size: queryInt()
    .optional()
    .meta({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: `Rows per page; larger values are served as ${MAX_PAGE_SIZE}.` }),
  cursor: z.string().min(1).optional(),
  page: queryInt().optional().meta({ minimum: 1 }),
  offset: queryInt().optional().meta({ minimum: 0 }),
  limit: queryInt().optional().meta({ minimum: 1, maximum: MAX_PAGE_SIZE }),
  withTotal: queryBoolean().optional(),
  sort: z.string().optional(),
};

/** The same parameters in a JSON body (`POST .../search`). */
export const pagingBodyShape = {
  size: int32().optional().meta({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }),
  // null is no cursor: a client sends back the nextCursor it last got, null before the first page.
  cursor: z.string().min(1).nullable().optional(),
  page: int32().optional().meta({ minimum: 1 }),
  offset: int32().optional().meta({ minimum: 0 }),
  limit: int32().optional().meta({ minimum: 1, maximum: MAX_PAGE_SIZE }),
  withTotal: z.boolean().optional(),
  sort: z.string().optional(),
};

export interface PagingParams {
  size?: number;
  /** null: none (the first page), as a body may send back a last page's nextCursor. */
  cursor?: string | null;
  page?: number;
  offset?: number;
  limit?: number;
  withTotal?: boolean;
}

export interface PageRequest<F extends string = string> {
  sort: Sort<F>;
  /** Rows to return; fetch `take + 1` to learn `hasNext`. */
  take: number;
  skip: number;
  /** Keyset position: rows strictly after (sort value, id). */
  after?: { value: CursorValue; id: string };
  withTotal: boolean;
  scope: string;
}

export interface ListEnvelope<T> {
  items: T[];
  nextCursor: string | null;
  hasNext: boolean;
  totalCount?: number;
  /** `totalCount` is an estimate (see total.ts); sent as a header, not in the body. */
  totalCountEstimated?: true;
}

/** The published shape of a page of `item`s (the OpenAPI document's `...Page` schemas). */
export function listEnvelopeSchema<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    nextCursor: z.string().nullable().meta({ description: 'Send it back as `cursor` for the next page; null on the last page.' }),
    hasNext: z.boolean(),
    totalCount: z.number().int().min(0).optional().meta({ description: 'Rows matching the filters; only with `withTotal=true`.' }),
  });
}

/** A paging parameter at fault; `unreadable` when the parameters cannot be read together (two styles). */
function fieldError(field: string, code: 'OUT_OF_RANGE' | 'NOT_ALLOWED', message: string, unreadable = false) {
  return refusalOf([{ field, code, message }], { message, unreadable });
}

/**
 * Turns paging parameters into a page request. `list` and `filters` scope the cursor so that it
 * cannot be replayed against another list, sort or filter.
 */
export function toPageRequest<F extends string>(
  params: PagingParams,
  options: { list: string; sort: Sort<F>; filters?: unknown; secret: string },
): PageRequest<F> {
  const cursor = params.cursor ?? undefined;
  const styles = [cursor !== undefined && 'cursor', params.page !== undefined && 'page', (params.offset !== undefined || params.limit !== undefined) && 'offset/limit'].filter(Boolean);
  if (styles.length > 1 || (params.limit !== undefined && params.size !== undefined)) {
    throw fieldError(String(styles[1] ?? 'limit'), 'NOT_ALLOWED', `Use one paging style: cursor, page+size or offset+limit (got ${styles.join(' and ') || 'limit and size'}).`, true);
  }
  const requested = params.limit ?? params.size ?? DEFAULT_PAGE_SIZE;
  if (requested < 1) throw fieldError(params.limit !== undefined ? 'limit' : 'size', 'OUT_OF_RANGE', 'Page size must be at least 1.');
  if (params.page !== undefined && params.page < 1) throw fieldError('page', 'OUT_OF_RANGE', 'page starts at 1.');
  if (params.offset !== undefined && params.offset < 0) throw fieldError('offset', 'OUT_OF_RANGE', 'offset must be 0 or more.');
  const take = Math.min(requested, MAX_PAGE_SIZE);
  const scope = scopeOf([options.list, options.sort.field, options.sort.direction, options.filters ?? null]);
  const request: PageRequest<F> = {
    sort: options.sort,
    take,
    skip: params.page !== undefined ? (params.page - 1) * take : (params.offset ?? 0),
    withTotal: params.withTotal ?? false,
    scope,
  };
  if (cursor !== undefined) {
    const values = decodeCursor(options.secret, scope, cursor);
    if (values.length !== 2 || typeof values[1] !== 'string') throw new ApiError('INVALID_CURSOR', 'The cursor is not valid for this list.');
    request.after = { value: values[0], id: values[1] };
  }
  return request;
}

/**
 * The Prisma `where` and `orderBy` of a keyset page: rows after (value, key) in sort order, with
 * the table's unique `key` breaking ties so the order is total (`id` for most tables, the SKU for
 * stock). Needs an index on (column, key). `column` names the Prisma field when it differs from
 * the public sort name.
 */
export function keysetQuery(request: PageRequest, column: string = request.sort.field, key = 'id'): { where: Record<string, unknown>; orderBy: Record<string, 'asc' | 'desc'>[] } {
  const { direction } = request.sort;
  const field = column;
  const orderBy = field === key ? [{ [key]: direction }] : [{ [field]: direction }, { [key]: direction }];
  if (!request.after) return { where: {}, orderBy };
  const beyond = direction === 'desc' ? 'lt' : 'gt';
  const { value, id } = request.after;
  const where = field === key ? { [key]: { [beyond]: id } } : { OR: [{ [field]: { [beyond]: value } }, { [field]: value, [key]: { [beyond]: id } }] };
  return { where, orderBy };
}

/** What a repository's list returns: up to `take + 1` rows (the extra one tells there is a next page) and the total when asked. */
export interface RowsPage<Row, Total extends number | TotalCount = number | TotalCount> {
  rows: Row[];
  total?: Total;
}

/**
 * One keyset page, the way every repository lists: `find` gets the keyset condition (to AND with
 * its own filter), the order and the window (`take + 1` rows); `count` counts the filter alone and
 * runs beside it only when the client asked for the total.
 */
export async function findKeysetPage<Row, Total extends number | TotalCount>(
  request: PageRequest,
  query: {
    column?: string;
    key?: string;
    find: (keyset: { where: Record<string, unknown>; orderBy: Record<string, 'asc' | 'desc'>[]; take: number; skip: number }) => Promise<Row[]>;
    count: () => Promise<Total>;
  },
): Promise<RowsPage<Row, Total>> {
  const keyset = keysetQuery(request, query.column, query.key);
  const [rows, total] = await Promise.all([query.find({ ...keyset, take: request.take + 1, skip: request.skip }), request.withTotal ? query.count() : undefined]);
  return { rows, total };
}

/** Builds the envelope from `take + 1` fetched rows; `mapListItems` turns its rows into responses. */
export function toListEnvelope<Row extends { id: string }>(
  rows: Row[],
  request: PageRequest,
  options: { secret: string; sortValue: (row: Row) => CursorValue; totalCount?: number | TotalCount },
): ListEnvelope<Row> {
  const hasNext = rows.length > request.take;
  const page = hasNext ? rows.slice(0, request.take) : rows;
  const last = page.at(-1);
  const envelope: ListEnvelope<Row> = {
    items: page,
    nextCursor: hasNext && last ? encodeCursor(options.secret, request.scope, [options.sortValue(last), last.id]) : null,
    hasNext,
  };
  if (request.withTotal) {
    const total = options.totalCount ?? 0;
    envelope.totalCount = typeof total === 'number' ? total : total.count;
    if (typeof total !== 'number' && !total.exact) envelope.totalCountEstimated = true;
  }
  return envelope;
}

/** The same page with each item mapped: a service's page of rows as clients see it (the body; `pageHeaders` gives its headers). */
export function mapListItems<Row, Item>(envelope: ListEnvelope<Row>, toItem: (row: Row) => Item): ListEnvelope<Item> {
  const { totalCountEstimated: _headerOnly, ...body } = envelope;
  return { ...body, items: envelope.items.map((row) => toItem(row)) };
}

/** The response headers of a page: `Total-Count-Estimated: true` when its total is an estimate. */
export function pageHeaders(envelope: ListEnvelope<unknown>): Record<string, string> {
  return envelope.totalCountEstimated ? { [TOTAL_ESTIMATED_HEADER]: 'true' } : {};
}
