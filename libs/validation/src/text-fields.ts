// Text fields that several services check alike: the SKU rule, written once, and the plain text a
// key or a reference is.
import { z } from 'zod';

/**
 * One line of text a column stores: `min` to `max` characters, none of them a control character
 * (PostgreSQL cannot store NUL; the others have no place in a key). Its length is counted in
 * UTF-16 code units, JavaScript's `length` (zod's `max` counts code points): the stricter count,
 * so 33 emoji are 66 and too long for 64, as inventory has always counted.
 */
export const plainText = ({ min = 0, max }: { min?: number; max: number }) =>
  z
    .string()
    .min(min)
    .refine((text) => text.length <= max, { message: `must have at most ${max} characters`, params: { code: 'TOO_LONG' } })
    // eslint-disable-next-line no-control-regex
    .refine((text) => !/[\u0000-\u001f\u007f]/.test(text), { message: 'must not contain control characters', params: { code: 'INVALID_FORMAT' } });

/**
 * Characters that change how the text around them is shown instead of being part of it: C0 and C1
 * controls, and Unicode's bidirectional overrides and isolates (a name shown reversed, as in
 * "Trojan Source").
 */
// eslint-disable-next-line no-control-regex
const DISPLAY_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** A name people read (a user's name, a nickname): trimmed, `min` to `max` characters, no control character or bidirectional override. */
export const displayName = ({ min = 1, max }: { min?: number; max: number }) =>
  z
    .string()
    .trim()
    .min(min)
    .max(max)
    .refine((text) => !DISPLAY_CONTROLS.test(text), { message: 'must not contain control characters or bidirectional overrides', params: { code: 'INVALID_FORMAT' } });

/** The longest SKU: the width of every SKU column (catalog's products, inventory's stock). */
export const MAX_SKU_LENGTH = 64;

/** The SKUs the catalog gives products: upper-case letters, digits and dashes, 2 to MAX_SKU_LENGTH characters. */
export const SKU_PATTERN = new RegExp(`^[A-Z0-9][A-Z0-9-]{1,${MAX_SKU_LENGTH - 1}}$`);

/** A SKU a product is given (catalog's products). */
export const productSkuField = () => z.string().regex(SKU_PATTERN, { error: 'sku is upper-case letters, digits and dashes' });

/**
 * A SKU a request names (inventory's stock): any text a SKU column can hold. One no product has is
 * not malformed, only unknown (inventory stocks what its operators name, and answers NOT_FOUND or
 * no level for the rest).
 */
export const skuField = () => plainText({ min: 1, max: MAX_SKU_LENGTH });
