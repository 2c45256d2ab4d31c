// The one way request bodies, query strings, GraphQL arguments and gRPC messages are checked: zod
// schemas, with every zod issue mapped to the contract's field codes, all reported at once, and the
// one place that tells a request that cannot be read from one that breaks a rule (`refusalOf`).
import { ApiError, type FieldError, type FieldErrorCode, Invalid } from '@platform/errors';
import { z } from 'zod';

/**
 * Where the checked value came from: the body, the query string, a named GraphQL argument, a gRPC
 * message (fields named as the .proto names them, `order_id`), or the parts of a REST request
 * checked together with a schema another transport shares (`parts`: the name a client sent each
 * top-level field as, `requestId` is the `Idempotency-Key` header).
 */
type Source = 'body' | 'query' | 'message' | { argument: string } | { parts: Readonly<Record<string, string>> };

/** Codes that mean "cannot be read as sent"; everything else is a broken rule. */
const unreadableCodes = new Set<FieldErrorCode>(['REQUIRED', 'INVALID_TYPE', 'UNKNOWN_FIELD', 'UNKNOWN_PARAMETER']);

/**
 * The refusal of a request's fields, and the one place that decides what kind it is. A request
 * that cannot be read as sent (a field missing, unknown or of the wrong type, or what the caller
 * says is unreadable: two paging styles at once) is the transport's refusal, a 400 ApiError. One
 * that reads but breaks a rule is the domain's `Invalid`, which each transport maps once (REST:
 * 422, gRPC: INVALID_ARGUMENT, GraphQL: VALIDATION_FAILED), as it maps the use cases' own.
 */
export function refusalOf(fieldErrors: FieldError[], options: { message?: string; unreadable?: boolean } = {}): ApiError | Invalid {
  const unreadable = options.unreadable ?? fieldErrors.some((error) => unreadableCodes.has(error.code));
  const { listed, unlisted } = listedErrors(fieldErrors);
  if (unreadable) return new ApiError('VALIDATION_FAILED', (options.message ?? 'The request has missing, unknown or wrongly typed fields.') + unlisted, { status: 400, fieldErrors: listed });
  return new Invalid((options.message ?? 'Some fields break a rule; correct them and resend.') + unlisted, listed);
}

/**
 * The most field errors one refusal lists: more than a request of the API can get wrong in earnest
 * (a search names up to 1,000 ids). A 1 MiB body of 90,000 unknown fields was answered with 7 MB
 * of errors, written, logged and compressed at every hop.
 */
export const MAX_LISTED_FIELD_ERRORS = 1_000;

/** The field errors a refusal lists, and the words its message ends with when some are left out. */
function listedErrors(fieldErrors: FieldError[]): { listed: FieldError[]; unlisted: string } {
  if (fieldErrors.length <= MAX_LISTED_FIELD_ERRORS) return { listed: fieldErrors, unlisted: '' };
  return { listed: fieldErrors.slice(0, MAX_LISTED_FIELD_ERRORS), unlisted: ` (the first ${MAX_LISTED_FIELD_ERRORS} of ${fieldErrors.length} wrong fields are listed)` };
}

/** A protobuf field's name in the .proto (`order_id`) from its name in the generated code (`orderId`). */
function protoName(key: PropertyKey): PropertyKey {
  return typeof key === 'string' ? key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`) : key;
}

function fieldPath(relative: PropertyKey[], source: Source): string {
  const path =
    source === 'message' ? relative.map(protoName)
    : typeof source !== 'object' ? relative
    : 'argument' in source ? [source.argument, ...relative]
    : relative.map((key, index) => (index === 0 && typeof key === 'string' ? (source.parts[key] ?? key) : key));
  if (path.length === 0) return typeof source === 'string' ? source : 'request';
  return path.reduce<string>((joined, key) => (typeof key === 'number' ? `${joined}[${key}]` : joined ? `${joined}.${String(key)}` : String(key)), '');
}

/** A type as a field message names it: "an integer", "an array", "an object", "a string". */
function typeWithArticle(expected: string): string {
  const name = expected === 'int' ? 'integer' : expected;
  return `${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name}`;
}

/** What a length counts, in the number the bound asks for: "1 item", "10 characters". */
function lengthWord(origin: string | undefined, bound: number | bigint): string {
  const word = origin === 'array' || origin === 'set' ? 'item' : 'character';
  return Number(bound) === 1 ? word : `${word}s`;
}

function toFieldErrors(issue: z.core.$ZodIssue, source: Source): FieldError[] {
  const field = fieldPath(issue.path, source);
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => ({
        field: fieldPath([...issue.path, key], source),
        code: source === 'query' ? 'UNKNOWN_PARAMETER' : 'UNKNOWN_FIELD',
        message: source === 'query' ? `Unknown query parameter '${key}'.` : `Unknown field '${key}'.`,
      }));
    case 'invalid_type':
      return issue.input === undefined
        ? [{ field, code: 'REQUIRED', message: `${field} is required.` }]
        : [{ field, code: 'INVALID_TYPE', message: `${field} must be ${typeWithArticle(issue.expected)}.` }];
    case 'too_small':
      return issue.origin === 'string' || issue.origin === 'array'
        ? [{ field, code: 'TOO_SHORT', message: `${field} must have at least ${String(issue.minimum)} ${lengthWord(issue.origin, issue.minimum)}.` }]
        : [{ field, code: 'OUT_OF_RANGE', message: `${field} must be ${issue.inclusive ? 'at least' : 'more than'} ${String(issue.minimum)}.` }];
    case 'too_big':
      return issue.origin === 'string' || issue.origin === 'array'
        ? [{ field, code: 'TOO_LONG', message: `${field} must have at most ${String(issue.maximum)} ${lengthWord(issue.origin, issue.maximum)}.` }]
        : [{ field, code: 'OUT_OF_RANGE', message: `${field} must be ${issue.inclusive ? 'at most' : 'less than'} ${String(issue.maximum)}.` }];
    case 'invalid_format':
      return [{ field, code: 'INVALID_FORMAT', message: issue.message && !issue.message.startsWith('Invalid') ? issue.message : `${field} is not a valid ${issue.format}.` }];
    case 'invalid_value':
      return [{ field, code: 'NOT_ALLOWED', message: `${field} must be one of: ${issue.values.map(String).join(', ')}.` }];
    case 'custom': {
      const code = (issue.params?.code as FieldErrorCode | undefined) ?? 'INVALID_FORMAT';
      // Schema messages are phrased to follow the field name ("must be an integer").
      return [{ field, code, message: /^[a-z]/.test(issue.message) ? `${field} ${issue.message}.` : issue.message }];
    }
    default:
      return [{ field, code: 'INVALID_TYPE', message: `${field} is not valid.` }];
  }
}

/** One value met by the NUL walk, linked to its parent: its path is built only if it is reported. */
interface Visit {
  value: unknown;
  key?: PropertyKey;
  parent?: Visit;
}

function pathOf(visit: Visit): PropertyKey[] {
  const keys: PropertyKey[] = [];
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) keys.push(at.key as PropertyKey);
  return keys.reverse();
}

/**
 * Strings holding NUL (U+0000), wherever they sit in the input: PostgreSQL text cannot store the
 * character, so such a value is refused here, for every field at once, before any rule runs.
 * Iterative, so a deeply nested body cannot exhaust the stack, and linear in the input's size:
 * no value copies its path, a reported one computes it.
 */
function nulCharacterErrors(input: unknown, source: Source): FieldError[] {
  const errors: FieldError[] = [];
  const pending: Visit[] = [{ value: input }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value } = next;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) {
        const field = fieldPath(pathOf(next), source);
        errors.push({ field, code: 'INVALID_FORMAT', message: `${field} must not contain NUL characters.` });
      }
    } else if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index++) pending.push({ value: value[index], key: index, parent: next });
    } else if (value && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) pending.push({ value: item, key, parent: next });
    }
  }
  return errors.reverse();
}

/**
 * One bound per field and side: a number past two bounds (1e20 is past `.int()`'s safe-integer
 * bound and the schema's own maximum) is told the tighter one, once.
 */
function tightestBounds(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  const tightest = new Map<string, z.core.$ZodIssue>();
  const keyOf = (issue: z.core.$ZodIssue) => (issue.code === 'too_big' || issue.code === 'too_small') && (issue.origin === 'number' || issue.origin === 'int') ? `${issue.code} ${JSON.stringify(issue.path)}` : undefined;
  for (const issue of issues) {
    const key = keyOf(issue);
    if (!key) continue;
    const kept = tightest.get(key);
    const tighter =
      !kept ? true
      : issue.code === 'too_big' && kept.code === 'too_big' ? Number(issue.maximum) < Number(kept.maximum)
      : issue.code === 'too_small' && kept.code === 'too_small' ? Number(issue.minimum) > Number(kept.minimum)
      : false;
    if (tighter) tightest.set(key, issue);
  }
  return issues.filter((issue) => {
    const key = keyOf(issue);
    return !key || tightest.get(key) === issue;
  });
}

/** The input's field errors, NUL characters first; none when it passes. */
function check<S extends z.ZodType>(schema: S, input: unknown, source: Source): { data: z.output<S>; fieldErrors?: undefined } | { fieldErrors: FieldError[] } {
  const nulErrors = nulCharacterErrors(input, source);
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success && !nulErrors.length) return { data: result.data };
  const schemaErrors = result.success ? [] : tightestBounds(result.error.issues).flatMap((issue) => toFieldErrors(issue, source));
  // A field refused for its NUL is not refused again; a set, so that 40,000 such fields cost no more than their count (a scan of the NUL list for each was seconds).
  const nulFields = new Set(nulErrors.map((error) => error.field));
  return { fieldErrors: [...nulErrors, ...schemaErrors.filter((error) => !nulFields.has(error.field))] };
}

function parse<S extends z.ZodType>(schema: S, input: unknown, source: Source): z.output<S> {
  const checked = check(schema, input, source);
  if (checked.fieldErrors) throw refusalOf(checked.fieldErrors);
  return checked.data;
}

/**
 * Checks a JSON body. Use `z.strictObject` so unknown fields are refused. No body at all reads as
 * `{}`; a body of `null` is a value, refused like `[]` (a merge patch of null would mean "remove
 * everything", never "change nothing").
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  return parse(schema, body === undefined ? {} : body, 'body');
}

/**
 * Checks a GraphQL argument with the REST body's schema, so both APIs enforce the same rules and
 * report the same codes; fields are named from the argument (`input.items[0].quantity`).
 */
export function parseArgument<S extends z.ZodType>(schema: S, value: unknown, argument: string): z.output<S> {
  return parse(schema, value ?? {}, { argument });
}

/**
 * Checks a query string. Use `z.strictObject` so unknown parameters are refused. A parameter sent
 * empty (`size=`, as a form sends a field left blank) is read as not sent: one rule for every
 * parameter of every endpoint, whatever its type, here where every query is read. Its name still
 * counts: an unknown one is refused, and a required one is REQUIRED.
 */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  return parse(schema, emptyAsAbsent(query ?? {}), 'query');
}

/** The parameters with each empty value made undefined, its name kept for the unknown-parameter check. */
function emptyAsAbsent(query: unknown): unknown {
  if (typeof query !== 'object' || query === null) return query;
  return Object.fromEntries(Object.entries(query).map(([name, value]) => [name, value === '' ? undefined : value]));
}

/**
 * Checks a gRPC request with the schema REST shares. A gRPC message is always readable (its
 * decoder typed every field), so any refusal is `Invalid` (INVALID_ARGUMENT), its fields named as
 * the .proto names them (`lines[0].order_id`) and its message listing each, for the status details
 * are the only text gRPC tooling shows.
 */
export function parseMessage<S extends z.ZodType>(schema: S, message: unknown): z.output<S> {
  const checked = check(schema, message ?? {}, 'message');
  if (checked.fieldErrors) {
    const { listed, unlisted } = listedErrors(checked.fieldErrors);
    throw new Invalid(listed.map((error) => error.message).join(' ') + unlisted, listed);
  }
  return checked.data;
}

/**
 * Checks values a REST request sends in its path, headers and body together, with the schema of
 * the message another transport sends them in (inventory's SetStock is PUT /stock-levels/{sku}).
 * `names` gives a top-level field the name the client sent it as (`{ requestId: 'Idempotency-Key' }`).
 */
export function parseParts<S extends z.ZodType>(schema: S, parts: unknown, names: Readonly<Record<string, string>> = {}): z.output<S> {
  return parse(schema, parts, { parts: names });
}
