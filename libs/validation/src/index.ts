export { z } from 'zod';
export { parseArgument, parseBody, parseQuery } from './validate';
export { readQueryString } from './query-string';
export { commaList, int32, INT32_MAX, INT32_MIN, isoDate, noQueryParameters, queryBoolean, queryInt } from './query-fields';
export { idField } from './id-field';
