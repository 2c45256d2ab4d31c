// Every list of the API is cursor-paged: a page has `items` and `nextCursor` (null on the last
// page); the next page is asked for with `cursor=<nextCursor>` and the same other parameters.
import { orThrow } from './errors';

/** One page of any list. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** What one call of the client returns (openapi-fetch's `{ data, error, response }`). */
export interface PageResult<T> {
  data?: Page<T>;
  error?: unknown;
  response: Response;
}

/**
 * Every item of a list, page after page, fetched as they are consumed:
 *
 *     for await (const order of allItems((cursor) => api.GET('/orders', { params: { query: { size: 100, cursor } } }))) ...
 *
 * `fetchPage(cursor)` asks for one page (`cursor` undefined for the first). A failed page throws
 * ApiRequestError; stopping the loop early fetches nothing more.
 */
export async function* allItems<T>(fetchPage: (cursor: string | undefined) => Promise<PageResult<T>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = orThrow(await fetchPage(cursor));
    yield* page.items;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}
