export { z } from 'zod';
export { parseArgument, parseBody, parseQuery } from './validate';
export { commaList, isoDate, noQueryParameters, queryBoolean, queryInt } from './query-fields';
export { idField } from './id-field';
