// Schema pieces for query-string values, which always arrive as text. `queryType` metadata
// tells the OpenAPI document what the text means.
import { z } from 'zod';

/** `true` / `false` as text, per the spec; anything else is a type error. */
export const queryBoolean = () =>
  z
    .string()
    .refine((value) => value === 'true' || value === 'false', { message: 'must be true or false', params: { code: 'INVALID_TYPE' } })
    .transform((value) => value === 'true')
    .meta({ queryType: 'boolean' });

/** An integer sent as text. */
export const queryInt = () =>
  z
    .string()
    .refine((value) => /^-?\d{1,15}$/.test(value), { message: 'must be an integer', params: { code: 'INVALID_TYPE' } })
    .transform(Number)
    .meta({ queryType: 'integer' });

/** `YYYY-MM-DD`, a calendar day. */
export const isoDate = () => z.iso.date({ error: 'must be a date as YYYY-MM-DD' });

/** One comma-separated list of allowed values (`status=PENDING,CANCELED`). */
export const commaList = <T extends string>(values: readonly [T, ...T[]]) =>
  z
    .string()
    .transform((text) => text.split(',').map((part) => part.trim()).filter(Boolean))
    .pipe(z.array(z.enum(values)).min(1))
    .meta({ queryList: values });

/** For endpoints that take no query parameters: any parameter is refused as unknown. */
export const noQueryParameters = z.strictObject({});
