export { parseSort, SORT_FIELDS_EXTENSION, sortPattern, type Sort, type SortDirection } from './sort';
export { decodeCursor, encodeCursor, type CursorValue } from './cursor';
export {
  DEFAULT_PAGE_SIZE,
  findKeysetPage,
  listEnvelopeSchema,
  mapListItems,
  pageHeaders,
  MAX_PAGE_SIZE,
  pagingBodyShape,
  pagingQueryShape,
  toListEnvelope,
  toPageRequest,
  type RowsPage,
  type ListEnvelope,
  type PageRequest,
  type PagingParams,
} from './page';
export { boundedTotal, EXACT_COUNT_LIMIT, TOTAL_ESTIMATED_HEADER, type TotalCount } from './total';
