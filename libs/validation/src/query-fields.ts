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

/**
 * The range of every integer the API takes, unless a field says less: PostgreSQL's `integer`
 * columns and protobuf's int32 hold no more, and a value past it must be the client's 422, not
 * the database's refusal.
 */
export const INT32_MIN = -2_147_483_648;
export const INT32_MAX = 2_147_483_647;

/** An integer of a JSON body, within `min`..`max` (a 32-bit integer unless narrower). */
export const int32 = ({ min = INT32_MIN, max = INT32_MAX }: { min?: number; max?: number } = {}) => z.number().int().min(min).max(max);

/** An integer sent as text, within `min`..`max` (a 32-bit integer unless narrower): 400 if it is no integer, 422 if out of range. */
export const queryInt = ({ min = INT32_MIN, max = INT32_MAX }: { min?: number; max?: number } = {}) =>
  z
    .string()
    .refine((value) => /^-?\d+$/.test(value), { message: 'must be an integer', params: { code: 'INVALID_TYPE' } })
    .transform(Number)
    .pipe(z.number().min(min).max(max))
    .meta({ queryType: 'integer', minimum: min, maximum: max });

/** `YYYY-MM-DD`, a calendar day. */
export const isoDate = () => z.iso.date({ error: 'must be a date as YYYY-MM-DD' });

const DAY_MS = 86_400_000;
const FIRST_STORABLE_MS = Date.parse('0001-01-01T00:00:00Z');

/**
 * The instants a filter of whole UTC days (isoDate `from` and `to`, both inclusive) spans: from
 * the start of `from` to before the start of the day after `to`. A bound before year 1 is year
 * 1's first instant: ISO 8601 has a year 0000 (1 BC) and isoDate takes it, but PostgreSQL's
 * calendar has none and refused it (a 500). Nothing was created before year 1, so `from` of year
 * 0000 leaves nothing out and `to` of year 0000 matches nothing, as they say.
 */
export function daySpan(from: string | undefined, to: string | undefined): { from?: Date; before?: Date } {
  const start = (day: string, laterDays = 0) => new Date(Math.max(Date.parse(`${day}T00:00:00Z`) + laterDays * DAY_MS, FIRST_STORABLE_MS));
  return { from: from === undefined ? undefined : start(from), before: to === undefined ? undefined : start(to, 1) };
}

/** A member between two commas: an empty one is missing, so the list cannot be read as sent (400). */
const listMember = z.string().refine((member) => member !== '', { message: 'is empty: a comma-separated list has a value between each two commas', params: { code: 'REQUIRED' } });

/**
 * The one reader of a comma-separated query value (`status=PENDING,CANCELED`, `ids=a,b`): its
 * members, trimmed, then `members` (what each is, how many). An empty member (`A,,B`, a trailing
 * comma) is refused on its place (`status[1]`, 400 REQUIRED) rather than dropped, which would read
 * another list than the one sent. A parameter sent empty is not sent (parseQuery), so never one here.
 */
export const commaSeparated = <T extends z.ZodType<unknown, string[]>>(members: T) =>
  z
    .string()
    .transform((text) => text.split(',').map((part) => part.trim()))
    .pipe(z.array(listMember))
    .pipe(members);

/** One comma-separated list of allowed values (`status=PENDING,CANCELED`). */
export const commaList = <T extends string>(values: readonly [T, ...T[]]) => commaSeparated(z.array(z.enum(values)).min(1)).meta({ queryList: values });

/** For endpoints that take no query parameters: any parameter is refused as unknown. */
export const noQueryParameters = z.strictObject({});
