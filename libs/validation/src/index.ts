export { z } from 'zod';
export { parseArgument, parseBody, parseMessage, parseParts, parseQuery, refusalOf } from './validate';
export { readQueryString } from './query-string';
export { commaList, commaSeparated, daySpan, int32, INT32_MAX, INT32_MIN, isoDate, noQueryParameters, queryBoolean, queryInt } from './query-fields';
export { idField, parsePath, pathId, pathKey, resourceId, resourceKey, writtenKey, type PathParameter } from './id-field';
export { displayName, MAX_SKU_LENGTH, plainText, productSkuField, SKU_PATTERN, skuField } from './text-fields';
export { MAX_ORDER_ITEMS } from './order-fields';
export { CHECKS_EXTENSION, UNNAMED_CHECK, unstatedChecksOf, type CheckChange, type CheckRevision, type ListedCheck } from './unstated-checks';
