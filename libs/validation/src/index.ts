export { z } from 'zod';
export { parseBody, parseQuery } from './validate';
export { commaList, isoDate, queryBoolean, queryInt } from './query-fields';
