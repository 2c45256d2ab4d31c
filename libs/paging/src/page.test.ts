import { ApiError, asApiError } from '@platform/errors';
import { encodeCursor } from './cursor';
import { findKeysetPage, keysetQuery, mapListItems, toListEnvelope, toPageRequest } from './page';
import { parseSort } from './sort';

const secret = 'test-cursor-secret';
const sort = { field: 'createdAt', direction: 'desc' } as const;
const rows = Array.from({ length: 6 }, (_, i) => ({ id: `id-${i}`, createdAt: new Date(Date.UTC(2026, 0, 10 - i)) }));

/** The refusal as a REST client receives it (a broken rule is the domain's Invalid, rendered 422). */
function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (error) {
    return asApiError(error);
  }
  throw new Error('expected an error');
}

describe('toPageRequest', () => {
  it('defaults to 20 rows and caps size at 100 silently', () => {
    expect(toPageRequest({}, { list: 'orders', sort, secret }).take).toBe(20);
    expect(toPageRequest({ size: 1000 }, { list: 'orders', sort, secret }).take).toBe(100);
  });

  it('turns page and offset styles into skip', () => {
    expect(toPageRequest({ page: 3, size: 10 }, { list: 'orders', sort, secret }).skip).toBe(20);
    expect(toPageRequest({ offset: 7, limit: 5 }, { list: 'orders', sort, secret })).toMatchObject({ skip: 7, take: 5 });
  });

  it('refuses two paging styles at once', () => {
    const error = errorOf(() => toPageRequest({ page: 2, offset: 5 }, { list: 'orders', sort, secret }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('VALIDATION_FAILED');
  });

  it('refuses a size under 1 with 422', () => {
    expect(errorOf(() => toPageRequest({ size: 0 }, { list: 'orders', sort, secret })).status).toBe(422);
  });

  it('opens a cursor it issued, for the same list, sort and filters', () => {
    const cursor = encodeCursor(secret, toPageRequest({}, { list: 'orders', sort, filters: { a: 1 }, secret }).scope, [rows[2].createdAt, rows[2].id]);
    const request = toPageRequest({ cursor }, { list: 'orders', sort, filters: { a: 1 }, secret });
    expect(request.after).toEqual({ value: rows[2].createdAt, id: 'id-2' });
  });

  it('answers 400 INVALID_CURSOR for a forged, altered or foreign cursor', () => {
    const scope = toPageRequest({}, { list: 'orders', sort, secret }).scope;
    const cursor = encodeCursor(secret, scope, [rows[2].createdAt, rows[2].id]);
    const [data, signature] = cursor.split('.');
    const altered = `${Buffer.from(JSON.stringify({ s: scope, v: [{ d: '2020-01-01T00:00:00.000Z' }, 'id-9'] })).toString('base64url')}.${signature}`;
    for (const bad of ['garbage', `${data}.AAAA`, altered, encodeCursor('other-secret', scope, ['x', 'y'])]) {
      const error = errorOf(() => toPageRequest({ cursor: bad }, { list: 'orders', sort, secret }));
      expect(error.code).toBe('INVALID_CURSOR');
      expect(error.status).toBe(400);
    }
    const foreign = errorOf(() => toPageRequest({ cursor }, { list: 'users', sort, secret }));
    expect(foreign.code).toBe('INVALID_CURSOR');
    const otherFilters = errorOf(() => toPageRequest({ cursor }, { list: 'orders', sort, filters: { status: ['PENDING'] }, secret }));
    expect(otherFilters.code).toBe('INVALID_CURSOR');
  });
});

describe('keysetQuery and toListEnvelope', () => {
  it('builds a where clause after (value, id) with id breaking ties', () => {
    const request = toPageRequest({}, { list: 'orders', sort, secret });
    request.after = { value: rows[1].createdAt, id: 'id-1' };
    expect(keysetQuery(request)).toEqual({
      where: { OR: [{ createdAt: { lt: rows[1].createdAt } }, { createdAt: rows[1].createdAt, id: { lt: 'id-1' } }] },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
  });

  it('walks every row exactly once across pages', () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let guard = 0; guard < 10; guard++) {
      const request = toPageRequest({ size: 4, cursor }, { list: 'orders', sort, secret });
      const after = request.after;
      const remaining = after ? rows.filter((row) => row.createdAt < (after.value as Date)) : rows;
      const envelope = toListEnvelope(remaining.slice(0, request.take + 1), request, { secret, sortValue: (row) => row.createdAt });
      seen.push(...envelope.items.map((row) => row.id));
      if (!envelope.hasNext) {
        expect(envelope.nextCursor).toBeNull();
        break;
      }
      cursor = envelope.nextCursor ?? undefined;
    }
    expect(seen).toEqual(rows.map((row) => row.id));
  });

  it('adds totalCount only when asked', () => {
    const plain = toListEnvelope(rows, toPageRequest({}, { list: 'o', sort, secret }), { secret, sortValue: (row) => row.createdAt });
    expect('totalCount' in plain).toBe(false);
    const counted = toListEnvelope(rows, toPageRequest({ withTotal: true }, { list: 'o', sort, secret }), { secret, sortValue: (row) => row.createdAt, totalCount: 6 });
    expect(counted.totalCount).toBe(6);
  });
});

describe('parseSort', () => {
  const allowed = ['createdAt', 'amount'] as const;
  const fallback = { field: 'createdAt', direction: 'desc' } as const;

  it('reads field,desc / -field / field and falls back when absent', () => {
    expect(parseSort('amount,desc', allowed, fallback)).toEqual({ field: 'amount', direction: 'desc' });
    expect(parseSort('-amount', allowed, fallback)).toEqual({ field: 'amount', direction: 'desc' });
    expect(parseSort('amount', allowed, fallback)).toEqual({ field: 'amount', direction: 'asc' });
    expect(parseSort(undefined, allowed, fallback)).toEqual(fallback);
  });

  it('refuses a field outside the allow-list with 400 and names the sortable fields', () => {
    const error = errorOf(() => parseSort('passwordHash', allowed, fallback));
    expect(error.status).toBe(400);
    expect(error.fieldErrors[0]).toMatchObject({ field: 'sort', code: 'NOT_ALLOWED' });
    expect(error.fieldErrors[0].message).toContain('createdAt, amount');
    expect(errorOf(() => parseSort('amount,sideways', allowed, fallback)).status).toBe(400);
  });
});

describe('mapListItems', () => {
  it('maps each item and keeps the cursor, hasNext and a totalCount only where there was one', () => {
    const page = { items: [{ id: 'a' }, { id: 'b' }], nextCursor: 'next', hasNext: true };
    expect(mapListItems(page, (row) => row.id.toUpperCase())).toEqual({ items: ['A', 'B'], nextCursor: 'next', hasNext: true });
    expect(Object.keys(mapListItems(page, (row) => row))).not.toContain('totalCount');
    expect(mapListItems({ ...page, totalCount: 7 }, (row) => row.id).totalCount).toBe(7);
  });
});

describe('findKeysetPage', () => {
  it('asks for one row more than the page and counts only when the total was asked for', async () => {
    const asked: unknown[] = [];
    const query = {
      find: async (keyset: unknown) => {
        asked.push(keyset);
        return rows;
      },
      count: async () => 42,
    };
    const plain = await findKeysetPage(toPageRequest({ size: 5 }, { list: 'orders', sort, secret }), query);
    expect(plain).toEqual({ rows, total: undefined });
    expect(asked[0]).toEqual({ where: {}, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: 6, skip: 0 });
    const counted = await findKeysetPage(toPageRequest({ size: 5, withTotal: true }, { list: 'orders', sort, secret }), query);
    expect(counted.total).toBe(42);
  });
});
