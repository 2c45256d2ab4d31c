// GraphQL mutations through the gateway, as a client app uses them: they go through the same
// services as REST, so the same validation, ownership, idempotency and stock rules hold, and a
// business failure is a GraphQL error with the REST code, the field null and HTTP 200. Stock and
// profile changes are read back over REST, where another client would see them.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { apiClient, runBounded } from '@platform/test-kit';
import { useContract } from './contract';
import { gatewayUrl, stackState } from './stack';

const call = apiClient(() => gatewayUrl, useContract(__filename).onResponse);
const operationsDir = path.join(__dirname, '../../gateway/src/graphql/operations');
/** A trusted document's text, as the client app ships it. */
const operation = (file: string) => readFileSync(path.join(operationsDir, file), 'utf8');

interface GraphQLAnswer {
  data?: Record<string, unknown> | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: { code?: string; errors?: unknown[] } }[];
  extensions?: { cost?: { requested: number; limit: number } };
}

let seq = 0;
let adminToken: string;

async function signUp() {
  seq += 1;
  const email = `gql-${Date.now()}-${seq}@example.com`;
  const user = await call('POST', '/v1/users', { body: { name: `GraphQL User ${seq}`, email, password: 'gql-password-1' } });
  const token = (await call('POST', '/v1/tokens', { body: { email, password: 'gql-password-1' } })).body.accessToken as string;
  return { id: user.body.id as string, email, token };
}

async function graphql(token: string, query: string, variables?: Record<string, unknown>): Promise<GraphQLAnswer> {
  const res = await call('POST', '/v1/graphql', { token, body: { query, variables } });
  expect(res.status).toBe(200);
  return res.body as GraphQLAnswer;
}

/** A product of its own with `onHand` units, so stock figures are this test's alone. */
async function stockedProduct(onHand: number) {
  seq += 1;
  const sku = `E2E-GQL-${Date.now()}-${seq}`;
  const product = await call('POST', '/v1/products', { token: adminToken, body: { name: `GraphQL product ${seq}`, sku, price: 1_500 } });
  expect(product.status).toBe(201);
  expect((await call('PUT', `/v1/stock-levels/${sku}`, { token: adminToken, body: { onHand } })).status).toBe(201);
  return { id: product.body.id as string, sku };
}

const available = async (sku: string) => (await call('GET', `/v1/stock-levels/${sku}`, { token: adminToken })).body.available as number;

beforeAll(async () => {
  adminToken = stackState().adminToken;
});

describe('createOrder', () => {
  it('places an order once per idempotency key, reserving its stock, and says what it cost', async () => {
    const customer = await signUp();
    const product = await stockedProduct(5);
    const variables = { input: { items: [{ productId: product.id, quantity: 2 }] }, idempotencyKey: `checkout-${Date.now()}` };
    const placed = await graphql(customer.token, operation('place-order.graphql'), variables);
    expect(placed).toEqual({
      data: { createOrder: { id: expect.any(String), amount: 3_000, currency: 'KRW', status: 'PENDING', createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), product: { name: expect.stringMatching(/^GraphQL product/) } } },
      extensions: { cost: { requested: 10 + 2 + 5 + 2 + 1, limit: 5_000 } },
    });
    const order = (placed.data?.createOrder as { id: string }).id;
    expect(await available(product.sku)).toBe(3);

    // A retry after a lost answer: the same order, and no second reservation.
    const retried = await graphql(customer.token, operation('place-order.graphql'), variables);
    expect((retried.data?.createOrder as { id: string }).id).toBe(order);
    expect(await available(product.sku)).toBe(3);
    // REST sees the order the graph placed.
    const rest = await call('GET', `/v1/orders/${order}`, { token: customer.token });
    expect([rest.status, rest.body.items]).toEqual([200, [expect.objectContaining({ productId: product.id, quantity: 2 })]]);

    // The same key with another input is refused, as over REST.
    const reused = await graphql(customer.token, operation('place-order.graphql'), { ...variables, input: { items: [{ productId: product.id, quantity: 1 }] } });
    expect(reused.data).toEqual({ createOrder: null });
    expect(reused.errors).toEqual([{ message: expect.any(String), path: ['createOrder'], extensions: { code: 'IDEMPOTENCY_KEY_REUSED' } }]);
  });

  it('answers OUT_OF_STOCK and VALIDATION_FAILED as REST does: code, field list, null, HTTP 200', async () => {
    const customer = await signUp();
    const product = await stockedProduct(1);
    const tooMany = await graphql(customer.token, operation('place-order.graphql'), { input: { items: [{ productId: product.id, quantity: 2 }] } });
    expect(tooMany.data).toEqual({ createOrder: null });
    expect(tooMany.errors).toEqual([
      { message: expect.any(String), path: ['createOrder'], extensions: { code: 'OUT_OF_STOCK', errors: [{ field: 'input.items[0].quantity', code: 'OUT_OF_RANGE', message: expect.any(String) }] } },
    ]);
    expect(await available(product.sku)).toBe(1);

    const badKey = await graphql(customer.token, operation('place-order.graphql'), { input: { items: [{ productId: product.id, quantity: 1 }] }, idempotencyKey: 'has spaces' });
    expect(badKey.data).toEqual({ createOrder: null });
    expect(badKey.errors?.[0]?.extensions).toEqual({ code: 'VALIDATION_FAILED', errors: [{ field: 'idempotencyKey', code: 'INVALID_FORMAT', message: expect.any(String) }] });
    const fields = await graphql(customer.token, operation('place-order.graphql'), { input: { items: [{ productId: product.id, quantity: 0 }], couponCode: 'lower-case' } });
    expect(fields.errors?.[0]?.extensions).toEqual({
      code: 'VALIDATION_FAILED',
      errors: expect.arrayContaining([
        { field: 'input.items[0].quantity', code: 'OUT_OF_RANGE', message: expect.any(String) },
        { field: 'input.couponCode', code: 'INVALID_FORMAT', message: expect.any(String) },
      ]),
    });
    // Nothing was placed by any of them.
    expect((await call('GET', '/v1/orders', { token: customer.token })).body.items).toEqual([]);
  });
});

describe('cancelOrder', () => {
  it('cancels the caller\'s own order and gives the stock back; again is ORDER_ALREADY_CANCELED; someone else\'s is NOT_FOUND', async () => {
    const customer = await signUp();
    const stranger = await signUp();
    const product = await stockedProduct(4);
    const order = (await call('POST', '/v1/orders', { token: customer.token, body: { items: [{ productId: product.id, quantity: 3 }] } })).body.id as string;
    expect(await available(product.sku)).toBe(1);

    const notYours = await graphql(stranger.token, operation('cancel-order.graphql'), { id: order });
    expect([notYours.data, notYours.errors?.[0]?.extensions?.code]).toEqual([{ cancelOrder: null }, 'NOT_FOUND']);

    expect(await graphql(customer.token, operation('cancel-order.graphql'), { id: order })).toEqual({ data: { cancelOrder: { id: order, status: 'CANCELED' } }, extensions: { cost: { requested: 10 + 2 + 2, limit: 5_000 } } });
    expect(await available(product.sku)).toBe(4);
    expect((await call('GET', `/v1/orders/${order}`, { token: customer.token })).body.status).toBe('CANCELED');

    const again = await graphql(customer.token, operation('cancel-order.graphql'), { id: order });
    expect(again.data).toEqual({ cancelOrder: null });
    expect(again.errors).toEqual([{ message: 'The order is already canceled.', path: ['cancelOrder'], extensions: { code: 'ORDER_ALREADY_CANCELED' } }]);
  });
});

describe('updateMe', () => {
  it('changes only the fields sent, as PATCH /v1/users/me does, and refuses what REST refuses', async () => {
    const customer = await signUp();
    const other = await signUp();
    const updated = await graphql(customer.token, operation('update-me.graphql'), { input: { nickname: 'Graphy', phone: '+82 10-1234-5678', address: { zipCode: '04524', line1: '1 Sejong-daero' } } });
    expect(updated.data).toEqual({
      updateMe: { id: customer.id, name: expect.stringMatching(/^GraphQL User/), email: customer.email, nickname: 'Graphy', phone: '+82 10-1234-5678', marketingAgreed: false, address: { zipCode: '04524', line1: '1 Sejong-daero', line2: null } },
    });
    const rest = await call('GET', '/v1/users/me', { token: customer.token });
    expect(rest.body).toMatchObject({ nickname: 'Graphy', phone: '+82 10-1234-5678', address: { zipCode: '04524', line1: '1 Sejong-daero', line2: null } });

    const taken = await graphql(customer.token, operation('update-me.graphql'), { input: { email: other.email } });
    expect([taken.data, taken.errors?.[0]?.extensions?.code]).toEqual([{ updateMe: null }, 'EMAIL_TAKEN']);
    const invalid = await graphql(customer.token, operation('update-me.graphql'), { input: { phone: 'call me', name: '' } });
    expect(invalid.errors?.[0]?.extensions).toEqual({
      code: 'VALIDATION_FAILED',
      errors: expect.arrayContaining([expect.objectContaining({ field: 'input.phone' }), expect.objectContaining({ field: 'input.name' })]),
    });
    // The password is not part of the graph's input: GraphQL itself refuses the field.
    const password = await graphql(customer.token, 'mutation { updateMe(input: { password: "new-password-1" }) { id } }');
    expect(password.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect((await call('GET', '/v1/users/me', { token: customer.token })).body.email).toBe(customer.email);
  });
});

describe('createReview', () => {
  it('reviews a product once; a second review, a bad rating and an unknown product are refused with REST\'s codes', async () => {
    const customer = await signUp();
    const product = await stockedProduct(1);
    const reviewed = await graphql(customer.token, operation('review-product.graphql'), { productId: product.id, input: { rating: 4, title: 'Solid' } });
    expect(reviewed.data).toEqual({ createReview: { id: expect.any(String), rating: 4, title: 'Solid', body: null, createdAt: expect.any(String), product: { id: product.id, rating: 4, reviewCount: 1 } } });
    const listed = await call('GET', `/v1/products/${product.id}/reviews`, { token: customer.token });
    expect(listed.body.items).toEqual([expect.objectContaining({ id: (reviewed.data?.createReview as { id: string }).id, rating: 4, userId: customer.id })]);

    const twice = await graphql(customer.token, operation('review-product.graphql'), { productId: product.id, input: { rating: 5 } });
    expect([twice.data, twice.errors?.[0]?.extensions?.code]).toEqual([{ createReview: null }, 'REVIEW_EXISTS']);
    const badRating = await graphql(customer.token, operation('review-product.graphql'), { productId: product.id, input: { rating: 6 } });
    expect(badRating.errors?.[0]?.extensions).toEqual({ code: 'VALIDATION_FAILED', errors: [{ field: 'input.rating', code: 'OUT_OF_RANGE', message: expect.any(String) }] });
    const unknown = await graphql(customer.token, operation('review-product.graphql'), { productId: '00000000-0000-4000-8000-000000000000', input: { rating: 3 } });
    expect([unknown.data, unknown.errors?.[0]?.extensions?.code]).toEqual([{ createReview: null }, 'NOT_FOUND']);
  });
});

describe('mutations over HTTP', () => {
  it('refuses a mutation over GET with 405 and runs a trusted mutation sent by its hash', async () => {
    const customer = await signUp();
    const text = operation('cancel-order.graphql');
    const overGet = await call('GET', `/v1/graphql?query=${encodeURIComponent(text)}&variables=${encodeURIComponent('{"id":"x"}')}`, { token: customer.token, headers: { accept: 'application/json' } });
    expect([overGet.status, overGet.headers.get('allow'), overGet.body.code]).toEqual([405, 'POST', 'METHOD_NOT_ALLOWED']);

    const product = await stockedProduct(1);
    const order = (await call('POST', '/v1/orders', { token: customer.token, body: { items: [{ productId: product.id, quantity: 1 }] } })).body.id as string;
    const byHash = await call('POST', '/v1/graphql', {
      token: customer.token,
      body: { variables: { id: order }, extensions: { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(text).digest('hex') } } },
    });
    expect([byHash.status, byHash.body.data]).toEqual([200, { cancelOrder: { id: order, status: 'CANCELED' } }]);
  });
});

describe('hostile mutations', () => {
  it('answers 1,000 malformed and hostile mutation documents and variables with 200 and errors or data, never a 5xx', async () => {
    const fuzzer = await signUp();
    const operations = readdirSync(operationsDir).filter((file) => file.endsWith('.graphql')).map(operation);
    const words = ['mutation', 'query', '{', '}', '(', ')', '[', ']', ':', '$v', '$v: String', '!', 'createOrder', 'cancelOrder', 'updateMe', 'createReview', 'input:', 'items:', 'productId:', 'quantity:', 'rating:', 'idempotencyKey:', 'id:', 'id', 'status', 'product', 'name', '"x"', '"\\u0000"', '0', '-1', '2147483648', '1e309', 'null', 'true', '...', 'on Order', '__typename', 'a:', '@skip(if: false)'];
    const hostileValue = fc.oneof(fc.anything({ maxDepth: 3 }), fc.string({ maxLength: 300 }), fc.constantFrom(0, -1, 2 ** 31, Number.POSITIVE_INFINITY, 1.5, Number.MAX_SAFE_INTEGER, '\u0000', '', 'x'.repeat(10_000)));
    const cases = fc.sample(
      fc.oneof(
        // Our own mutations, with variables of any shape: wrong types, NULs, huge numbers, deep objects.
        fc.record({ query: fc.constantFrom(...operations), variables: fc.dictionary(fc.constantFrom('input', 'id', 'idempotencyKey', 'productId'), hostileValue) }),
        // ...with inputs that pass GraphQL's type check and must be refused by the services' rules.
        fc.record({
          query: fc.constant(operation('place-order.graphql')),
          variables: fc.record({ input: fc.record({ items: fc.array(fc.record({ productId: fc.oneof(fc.uuid(), fc.string()), quantity: fc.integer() }), { maxLength: 60 }), couponCode: fc.string() }), idempotencyKey: fc.string({ maxLength: 300 }) }),
        }),
        fc.record({ query: fc.constant(operation('update-me.graphql')), variables: fc.record({ input: fc.record({ name: fc.string(), email: fc.string(), phone: fc.string(), nickname: fc.string({ maxLength: 80 }) }, { requiredKeys: [] }) }) }),
        // Word soup around the mutation fields.
        fc.record({ query: fc.array(fc.constantFrom(...words), { maxLength: 60 }).map((parts) => parts.join(' ')), variables: fc.dictionary(fc.constantFrom('v', 'input'), hostileValue) }),
      ),
      { numRuns: 1_000, seed: 20_261_123 },
    );
    const statuses = new Map<number, number>();
    await runBounded(cases.length, 8, async (index) => {
      const res = await call('POST', '/v1/graphql', { token: fuzzer.token, body: cases[index], headers: { accept: 'application/json' } });
      const body = res.body as GraphQLAnswer;
      // Anything that reaches GraphQL answers 200 in GraphQL's shape; a failure carries a code.
      if (res.status !== 200 || !(body.data !== undefined || body.errors?.every((error) => typeof error.extensions?.code === 'string'))) {
        throw new Error(`case ${index} answered ${res.status} ${res.text.slice(0, 300)}`);
      }
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    });
    expect(Object.fromEntries(statuses)).toEqual({ 200: 1_000 });
  });
});
