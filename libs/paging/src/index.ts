export { parseSort, type Sort, type SortDirection } from './sort';
export { decodeCursor, encodeCursor, type CursorValue } from './cursor';
export {
  DEFAULT_PAGE_SIZE,
  findKeysetPage,
  listEnvelopeSchema,
  mapListItems,
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
