import { ApiError, asApiError, Invalid, NotFound } from '@platform/errors';
import { z } from 'zod';
import { commaList, queryBoolean, queryInt } from './query-fields';
import { idField, pathId, pathKey } from './id-field';
import { MAX_SKU_LENGTH, productSkuField, skuField } from './text-fields';
import { MAX_LISTED_FIELD_ERRORS, parseBody, parseMessage, parseParts, parseQuery, refusalOf } from './validate';

const signUp = z.strictObject({
  name: z.string().min(1).max(10),
  email: z.email(),
  password: z.string().min(10),
  marketingAgreed: z.boolean().optional(),
  address: z.strictObject({ zipCode: z.string() }).optional(),
});

/** The refusal as a REST client receives it (a broken rule is the domain's Invalid, rendered 422). */
function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError || error instanceof Invalid) return asApiError(error);
    throw error;
  }
  throw new Error('expected a validation failure');
}

describe('parseBody', () => {
  it('returns the parsed value when everything is right', () => {
    expect(parseBody(signUp, { name: 'Kim', email: 'kim@example.com', password: '0123456789' })).toEqual({ name: 'Kim', email: 'kim@example.com', password: '0123456789' });
  });

  it('answers 400 and lists every missing, mistyped and unknown field at once', () => {
    const error = failure(() => parseBody(signUp, { name: 5, marketingAgreed: 'yes', amount: 100, address: { zipCode: 1 } }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.fieldErrors.map(({ field, code }) => ({ field, code }))).toEqual(
      expect.arrayContaining([
        { field: 'name', code: 'INVALID_TYPE' },
        { field: 'email', code: 'REQUIRED' },
        { field: 'password', code: 'REQUIRED' },
        { field: 'marketingAgreed', code: 'INVALID_TYPE' },
        { field: 'amount', code: 'UNKNOWN_FIELD' },
        { field: 'address.zipCode', code: 'INVALID_TYPE' },
      ]),
    );
    expect(error.fieldErrors).toHaveLength(6);
  });

  it('reads no body as an empty object, but refuses a body of null or an array as not an object', () => {
    const optional = z.strictObject({ nickname: z.string().optional() });
    expect(parseBody(optional, undefined)).toEqual({});
    for (const body of [null, []]) {
      const error = failure(() => parseBody(optional, body));
      expect([error.status, error.code, error.fieldErrors.map(({ code }) => code)]).toEqual([400, 'VALIDATION_FAILED', ['INVALID_TYPE']]);
    }
  });

  it('answers 422 when every field is readable but breaks a rule', () => {
    const error = failure(() => parseBody(signUp, { name: 'a very long name', email: 'not-an-email', password: 'short' }));
    expect(error.status).toBe(422);
    expect(error.fieldErrors.map(({ field, code }) => ({ field, code }))).toEqual([
      { field: 'name', code: 'TOO_LONG' },
      { field: 'email', code: 'INVALID_FORMAT' },
      { field: 'password', code: 'TOO_SHORT' },
    ]);
    expect(error.fieldErrors.every((entry) => entry.message.length > 0)).toBe(true);
  });

  it('tells a number past two bounds the tighter one, once (1e20 is past the safe integers and the maximum)', () => {
    const item = z.strictObject({ quantity: z.number().int().min(1).max(1000) });
    for (const [quantity, message] of [
      [1e20, 'quantity must be at most 1000.'],
      [-1e20, 'quantity must be at least 1.'],
    ] as const) {
      const error = failure(() => parseBody(item, { quantity }));
      expect([error.status, error.fieldErrors]).toEqual([422, [{ field: 'quantity', code: 'OUT_OF_RANGE', message }]]);
    }
  });

  it('treats a body that is not an object as a type error', () => {
    const error = failure(() => parseBody(signUp, [1, 2]));
    expect(error.status).toBe(400);
    expect(error.fieldErrors[0]).toEqual({ field: 'body', code: 'INVALID_TYPE', message: 'body must be an object.' });
    const list = failure(() => parseBody(z.strictObject({ status: z.array(z.string()), name: z.string() }), { status: 'PENDING', name: 1 }));
    expect(list.fieldErrors.map((entry) => entry.message)).toEqual(['status must be an array.', 'name must be a string.']);
  });

  it('counts lengths in the singular for one: "at least 1 item", "at least 1 character"', () => {
    const schema = z.strictObject({ items: z.array(z.string()).min(1), name: z.string().min(1), tags: z.array(z.string()).max(2) });
    const error = failure(() => parseBody(schema, { items: [], name: '', tags: ['a', 'b', 'c'] }));
    expect(error.fieldErrors.map((entry) => entry.message)).toEqual(['items must have at least 1 item.', 'name must have at least 1 character.', 'tags must have at most 2 items.']);
  });

  it('names array positions in field paths', () => {
    const schema = z.strictObject({ items: z.array(z.strictObject({ quantity: z.number().int().min(1) })).min(1) });
    const error = failure(() => parseBody(schema, { items: [{ quantity: 1 }, { quantity: 0 }] }));
    expect(error.status).toBe(422);
    expect(error.fieldErrors[0]).toMatchObject({ field: 'items[1].quantity', code: 'OUT_OF_RANGE' });
  });
});

describe('parseQuery', () => {
  const listQuery = z.strictObject({ size: queryInt().optional(), hasCoupon: queryBoolean().optional(), status: commaList(['PENDING', 'CANCELED']).optional() });

  it('reads integers, booleans and comma lists from text', () => {
    expect(parseQuery(listQuery, { size: '5', hasCoupon: 'false', status: 'PENDING,CANCELED' })).toEqual({ size: 5, hasCoupon: false, status: ['PENDING', 'CANCELED'] });
  });

  it('refuses unknown parameters with UNKNOWN_PARAMETER', () => {
    const error = failure(() => parseQuery(listQuery, { sizee: '5' }));
    expect(error.status).toBe(400);
    expect(error.fieldErrors).toEqual([{ field: 'sizee', code: 'UNKNOWN_PARAMETER', message: "Unknown query parameter 'sizee'." }]);
  });

  it('refuses a boolean that is not true/false and a status outside the list', () => {
    const error = failure(() => parseQuery(listQuery, { hasCoupon: 'yes', status: 'PENDING,LOST' }));
    expect(error.fieldErrors.map((entry) => `${entry.field}:${entry.code}`).sort()).toEqual(['hasCoupon:INVALID_TYPE', 'status[1]:NOT_ALLOWED']);
    expect(error.status).toBe(400);
  });

  it('reads a parameter sent empty as one not sent, whatever its type; an empty unknown one is still refused', () => {
    expect(parseQuery(listQuery, { size: '', hasCoupon: '', status: '' })).toEqual({});
    expect(parseQuery(z.strictObject({ q: z.string().min(1).optional() }), { q: '' })).toEqual({});
    expect(failure(() => parseQuery(z.strictObject({ q: z.string() }), { q: '' })).fieldErrors).toEqual([expect.objectContaining({ field: 'q', code: 'REQUIRED' })]);
    expect(failure(() => parseQuery(listQuery, { sizee: '' })).fieldErrors).toEqual([expect.objectContaining({ field: 'sizee', code: 'UNKNOWN_PARAMETER' })]);
  });

  it('refuses an empty member of a comma list (`A,,B`, a trailing comma) with 400 REQUIRED on its place', () => {
    const error = failure(() => parseQuery(listQuery, { status: 'PENDING,,CANCELED' }));
    expect([error.status, error.fieldErrors]).toEqual([400, [{ field: 'status[1]', code: 'REQUIRED', message: expect.stringContaining('status[1]') }]]);
    expect(failure(() => parseQuery(listQuery, { status: 'PENDING, ' })).fieldErrors).toEqual([expect.objectContaining({ field: 'status[1]', code: 'REQUIRED' })]);
    expect(failure(() => parseQuery(listQuery, { status: ',' })).fieldErrors.map(({ field }) => field)).toEqual(['status[0]', 'status[1]']);
    expect(parseQuery(listQuery, { status: ' PENDING , CANCELED' })).toEqual({ status: ['PENDING', 'CANCELED'] });
  });

  it('answers 400 INVALID_TYPE for text where an integer belongs', () => {
    const error = failure(() => parseQuery(listQuery, { size: 'ten' }));
    expect(error.status).toBe(400);
    expect(error.fieldErrors).toEqual([{ field: 'size', code: 'INVALID_TYPE', message: 'size must be an integer.' }]);
  });
});

describe('NUL characters (PostgreSQL text cannot hold them)', () => {
  it('are refused in any string of a body or a query, every such field at once', () => {
    const schema = z.strictObject({ name: z.string(), tags: z.array(z.string()), address: z.strictObject({ line1: z.string() }) });
    const error = failure(() => parseBody(schema, { name: 'a\u0000b', tags: ['ok', '\u0000'], address: { line1: 'x\u0000' } }));
    expect(error.status).toBe(422);
    expect(error.fieldErrors.map(({ field, code }) => [field, code])).toEqual([
      ['name', 'INVALID_FORMAT'],
      ['tags[1]', 'INVALID_FORMAT'],
      ['address.line1', 'INVALID_FORMAT'],
    ]);
    expect(() => parseQuery(z.strictObject({ q: z.string() }), { q: '\u0000' })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});

describe('a request with very many wrong fields', () => {
  const manyFields = (count: number, value: unknown) => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, value]));

  it('lists the first MAX_LISTED_FIELD_ERRORS, its message saying how many there were, in a body, a query and a gRPC message', () => {
    const unknown = failure(() => parseBody(signUp, manyFields(2_000, 0)));
    expect([unknown.status, unknown.fieldErrors.length, unknown.message]).toEqual([400, MAX_LISTED_FIELD_ERRORS, expect.stringMatching(/\(the first 1000 of 2003 wrong fields are listed\)$/)]);
    expect(failure(() => parseQuery(z.strictObject({}), manyFields(2_000, '1'))).fieldErrors).toHaveLength(MAX_LISTED_FIELD_ERRORS);
    let refusal: Invalid | undefined;
    try {
      parseMessage(z.object({ skus: z.array(z.string().max(1)) }), { skus: Array(2_000).fill('long') });
    } catch (error) {
      refusal = error as Invalid;
    }
    expect([refusal?.fieldErrors.length, refusal?.message]).toEqual([MAX_LISTED_FIELD_ERRORS, expect.stringMatching(/\(the first 1000 of 2000 wrong fields are listed\)$/)]);
  });

  // The property is a bound on work. 100,000 fields holding NUL (a 1 MiB body holds about
  // 58,000) are checked in about 1.5 s here; when the cost grew with their square, 50,000 took
  // 3.4 s and 100,000 four times that.
  const LINEAR_CHECK_MS = 5_000;

  it('checks fields holding NUL in a time that grows with their number, not its square', () => {
    const started = Date.now();
    const error = failure(() => parseBody(signUp, manyFields(100_000, '\u0000')));
    expect([error.status, error.fieldErrors.length, error.fieldErrors[0].code, Date.now() - started < LINEAR_CHECK_MS]).toEqual([400, MAX_LISTED_FIELD_ERRORS, 'INVALID_FORMAT', true]);
  });
});

describe('refusalOf: the one place that tells 400 from 422', () => {
  const field = (code: 'REQUIRED' | 'OUT_OF_RANGE' | 'NOT_ALLOWED') => ({ field: 'f', code, message: 'f is wrong.' });

  it('refuses a request it cannot read as the transport (ApiError 400), one that breaks a rule as the domain (Invalid, 422 in REST)', () => {
    const unread = refusalOf([field('REQUIRED'), field('OUT_OF_RANGE')]);
    expect([unread instanceof ApiError, asApiError(unread).status]).toEqual([true, 400]);
    const broken = refusalOf([field('OUT_OF_RANGE')]);
    expect([broken instanceof Invalid, asApiError(broken).status, asApiError(broken).code]).toEqual([true, 422, 'VALIDATION_FAILED']);
  });

  it('takes the caller\'s word that parameters cannot be read together, and its message', () => {
    const error = asApiError(refusalOf([field('NOT_ALLOWED')], { unreadable: true, message: 'Use one paging style.' }));
    expect([error.status, error.message, error.fieldErrors]).toEqual([400, 'Use one paging style.', [field('NOT_ALLOWED')]]);
  });
});

describe('parseMessage (gRPC)', () => {
  const reserve = z.object({ orderId: z.string().min(1), lines: z.array(z.object({ sku: z.string().max(3), onHand: z.number().int().min(0) })) });

  it('refuses with Invalid, fields named as the .proto names them, the message naming each', () => {
    let refusal: unknown;
    try {
      parseMessage(reserve, { orderId: '', lines: [{ sku: 'ok', onHand: 1 }, { sku: 'long', onHand: -1 }] });
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(Invalid);
    const { message, fieldErrors } = refusal as Invalid;
    expect(fieldErrors.map(({ field, code }) => [field, code])).toEqual([
      ['order_id', 'TOO_SHORT'],
      ['lines[1].sku', 'TOO_LONG'],
      ['lines[1].on_hand', 'OUT_OF_RANGE'],
    ]);
    expect(message).toMatch(/^order_id .*lines\[1\]\.sku .*lines\[1\]\.on_hand /);
  });

  it('returns the checked message', () => {
    expect(parseMessage(reserve, { orderId: 'o', lines: [] })).toEqual({ orderId: 'o', lines: [] });
  });
});

describe('parseParts (a REST request checked with another transport\'s schema)', () => {
  it('names each field as the client sent it, and decides 400 or 422 as for a body', () => {
    const change = z.object({ sku: z.string().max(3), requestId: z.string().max(3), onHand: z.number() });
    const broken = failure(() => parseParts(change, { sku: 'long', requestId: 'long', onHand: 1 }, { requestId: 'Idempotency-Key' }));
    expect([broken.status, broken.fieldErrors.map(({ field }) => field)]).toEqual([422, ['sku', 'Idempotency-Key']]);
    expect(failure(() => parseParts(change, { sku: 'a', requestId: 'b' })).status).toBe(400);
  });
});

describe('pathId and pathKey: what a path names', () => {
  const caught = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return error;
    }
    throw new Error('expected a refusal');
  };

  it('answers a value that is no id as the resource not found (404), never as invalid input', () => {
    const error = caught(() => pathId('not-a-uuid', 'Order'));
    expect(error).toBeInstanceOf(NotFound);
    expect([asApiError(error).status, (error as NotFound).message]).toEqual([404, 'Order not found.']);
    const id = '01890a5d-ac96-774b-bcce-b302099a8057';
    expect(pathId(id, 'Order')).toBe(id);
  });

  it('takes an id in any case (RFC 9562: UUIDs are case-insensitive on input) and gives it back lowercase, in a path, a body or a query', () => {
    const id = '01890a5d-ac96-774b-bcce-b302099a8057';
    expect(pathId(id.toUpperCase(), 'Order')).toBe(id);
    expect(pathId('01890A5D-ac96-774B-bcce-B302099A8057', 'Order')).toBe(id);
    expect(parseBody(z.strictObject({ id: idField() }), { id: id.toUpperCase() })).toEqual({ id });
  });

  it('does the same for a key with its own rule, naming the key', () => {
    const error = caught(() => pathKey(skuField(), 'x'.repeat(MAX_SKU_LENGTH + 1), 'Stock level', ['x']));
    expect([asApiError(error).status, (error as NotFound).keys]).toEqual([404, ['x']]);
    expect(pathKey(skuField(), 'KB-1', 'Stock level')).toBe('KB-1');
  });

  it('leaves ids in bodies and queries to idField: 422 INVALID_FORMAT', () => {
    expect(failure(() => parseBody(z.strictObject({ id: idField() }), { id: 'nope' })).status).toBe(422);
    // A well-formed UUID of another version is told which ids this API takes, not that it is no UUID.
    const v4 = failure(() => parseBody(z.strictObject({ id: idField() }), { id: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' }));
    expect([v4.status, v4.fieldErrors[0]?.code, v4.fieldErrors[0]?.message]).toEqual([422, 'INVALID_FORMAT', expect.stringContaining('version 7')]);
    // Sent in upper case, it is refused for its version, not its case: the message asks for no case.
    const upperV4 = failure(() => parseBody(z.strictObject({ id: idField() }), { id: '3F2504E0-4F89-41D3-9A0C-0305E82C3301' }));
    expect(upperV4.fieldErrors[0]?.message).toBe('id must be an id this API issued (a UUID, version 7; upper or lower case).');
  });
});

describe('the SKU rule, written once', () => {
  it('holds MAX_SKU_LENGTH characters in the catalog\'s pattern and in any SKU a request names', () => {
    const longest = `A${'B'.repeat(MAX_SKU_LENGTH - 1)}`;
    expect([productSkuField().safeParse(longest).success, productSkuField().safeParse(`${longest}C`).success]).toEqual([true, false]);
    expect([skuField().safeParse(longest).success, skuField().safeParse(`${longest}C`).success]).toEqual([true, false]);
  });

  it('gives products upper-case letters, digits and dashes; a request may name any SKU a column holds', () => {
    expect(productSkuField().safeParse('kb-1').success).toBe(false);
    expect(skuField().safeParse('kb-1').success).toBe(true);
    for (const bad of ['', 'A\u0001B', 'A\tB', 'A\u007fB']) expect(skuField().safeParse(bad).success).toBe(false);
    // 33 emoji are 66 UTF-16 code units: too long, though zod's own max would count 33.
    expect([skuField().safeParse('😀'.repeat(32)).success, skuField().safeParse('😀'.repeat(33)).success]).toEqual([true, false]);
  });
});
