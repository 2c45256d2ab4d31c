// The contract check itself: it must catch what it promises to catch, or the count it prints
// proves nothing. Fed the served document and responses the API could wrongly send.
import { Contract } from './contract';

let contract: Contract;
beforeAll(async () => {
  contract = await Contract.load();
});

const id = '01a20097-b6ee-740a-909d-9896572adaa7';
const at = '2026-11-21T09:30:00.000Z';
const review = { id, productId: id, userId: id, rating: 4, title: null, body: null, createdAt: at };
const headers = (extra: Record<string, string> = {}) => new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'a'.repeat(32), ...extra });
const check = (method: string, url: string, status: number, h: Headers, body: unknown) => contract.mismatches(method, url, status, h, body, body === undefined ? '' : JSON.stringify(body));

describe('the contract check', () => {
  it('passes a response that keeps the contract', () => {
    expect(check('GET', `/v1/products/${id}/reviews/${id}`, 200, headers(), review)).toEqual([]);
  });

  it('fails a field the document does not declare, a missing required field and a wrong type', () => {
    expect(check('GET', `/v1/products/${id}/reviews/${id}`, 200, headers(), { ...review, secret: 'x' }).join()).toMatch(/must NOT have additional properties/);
    const { title: _title, ...withoutTitle } = review;
    expect(check('GET', `/v1/products/${id}/reviews/${id}`, 200, headers(), withoutTitle).join()).toMatch(/must have required property 'title'/);
    expect(check('GET', `/v1/products/${id}/reviews/${id}`, 200, headers(), { ...review, rating: '4' }).join()).toMatch(/rating must be integer/);
  });

  it('fails an undocumented status, a missing required header and an undocumented API header', () => {
    expect(check('GET', `/v1/products/${id}/reviews/${id}`, 409, headers(), { code: 'CONFLICT', message: 'x', traceId: 't', errors: [] }).join()).toMatch(/status 409 is not documented/);
    expect(check('POST', '/v1/orders', 201, headers({ location: `/v1/orders/${id}` }), undefined).join()).toMatch(/required header etag is missing/);
    expect(check('GET', `/v1/products/${id}/reviews/${id}`, 200, headers({ etag: '"1"' }), review).join()).toMatch(/header etag is not documented/);
  });

  it('fails an error body outside the error format, and a body where none is documented', () => {
    expect(check('GET', `/v1/orders/${id}`, 404, headers(), { error: 'not found' }).join()).toMatch(/must have required property 'code'/);
    expect(check('DELETE', `/v1/orders/${id}`, 204, headers(), { ok: true }).join()).toMatch(/declares no body/);
  });
});
