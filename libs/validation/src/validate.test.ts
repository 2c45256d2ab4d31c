import { ApiError } from '@platform/errors';
import { z } from 'zod';
import { commaList, queryBoolean, queryInt } from './query-fields';
import { parseBody, parseQuery } from './validate';

const signUp = z.strictObject({
  name: z.string().min(1).max(10),
  email: z.email(),
  password: z.string().min(10),
  marketingAgreed: z.boolean().optional(),
  address: z.strictObject({ zipCode: z.string() }).optional(),
});

function failure(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ApiError) return error;
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

  it('treats a body that is not an object as a type error', () => {
    const error = failure(() => parseBody(signUp, [1, 2]));
    expect(error.status).toBe(400);
    expect(error.fieldErrors[0]).toMatchObject({ field: 'body', code: 'INVALID_TYPE' });
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

  it('answers 400 INVALID_TYPE for text where an integer belongs', () => {
    const error = failure(() => parseQuery(listQuery, { size: 'ten' }));
    expect(error.status).toBe(400);
    expect(error.fieldErrors).toEqual([{ field: 'size', code: 'INVALID_TYPE', message: 'size must be an integer.' }]);
  });
});

describe('NUL characters (PostgreSQL text cannot hold them)', () => {
  it('are refused in any string of a body or a query, every such field at once', () => {
    const schema = z.strictObject({ name: z.string(), tags: z.array(z.string()), address: z.strictObject({ line1: z.string() }) });
    const error = (() => {
      try {
        parseBody(schema, { name: 'a\u0000b', tags: ['ok', '\u0000'], address: { line1: 'x\u0000' } });
      } catch (thrown) {
        return thrown as ApiError;
      }
      throw new Error('expected a refusal');
    })();
    expect(error.status).toBe(422);
    expect(error.fieldErrors.map(({ field, code }) => [field, code])).toEqual([
      ['name', 'INVALID_FORMAT'],
      ['tags[1]', 'INVALID_FORMAT'],
      ['address.line1', 'INVALID_FORMAT'],
    ]);
    expect(() => parseQuery(z.strictObject({ q: z.string() }), { q: '\u0000' })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});
