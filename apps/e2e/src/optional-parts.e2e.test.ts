// The published document against the server, for what a client may leave out: every operation is
// sent with only what the document requires (path ids of real resources, a token), with no
// optional parameter, no optional header and no body where the body is optional. The server must
// not then ask for what the document calls optional (400/415/422/428), and where the document
// requires a body, leaving it out must be refused as the document says. Generated clients follow
// the document to the letter, so any difference is a call they cannot make, or make wrongly.
import { apiClient } from '@platform/test-kit';
import { useContract } from './contract';
import { gatewayUrl, STOCKED_PRODUCTS, stackState } from './stack';

const contract = useContract(__filename);
const call = apiClient(() => gatewayUrl, contract.onResponse);

interface DocumentOperation {
  operationId: string;
  parameters?: ({ $ref: string } | { name: string; in: string; required?: boolean })[];
  requestBody?: { required?: boolean };
}

// GraphQL takes a query or a trusted document's id in `extensions`: one of two optional parts is
// needed, which OpenAPI cannot say; graphql.e2e.test.ts sends each of the two.
const notExpressible = new Set(['queryGraphqlOverGet', 'queryGraphql']);

it('accepts every operation sent with its optional parts left out, and refuses a left-out required body', async () => {
  const document = (await call('GET', '/v1/openapi.json')).body as { paths: Record<string, Record<string, DocumentOperation>> };
  const admin = stackState().adminToken;
  const email = `optional-${Date.now()}@example.com`;
  const user = (await call('POST', '/v1/users', { body: { name: 'Optional Parts', email, password: 'optional-password-1' } })).body;
  const customer = (await call('POST', '/v1/tokens', { body: { email, password: 'optional-password-1' } })).body.accessToken as string;
  const stocked = (await call('GET', STOCKED_PRODUCTS, { token: admin })).body.items[0];
  const product = (await call('POST', '/v1/products', { token: admin, body: { sku: `OPT-${Date.now()}`, name: 'Optional parts', price: 100 } })).body;
  const order = (await call('POST', '/v1/orders', { token: customer, body: { items: [{ productId: stocked.id, quantity: 1 }] } })).body;
  const review = (await call('POST', `/v1/products/${product.id}/reviews`, { token: customer, body: { rating: 4 } })).body;
  expect([user.id, product.id, order.id, review.id].every((id) => typeof id === 'string')).toBe(true);
  const ids: Record<string, Record<string, string>> = {
    '/users/{id}': { id: user.id },
    '/orders/{id}': { id: order.id },
    '/order-items/{id}': { id: order.items[0].id },
    '/products/{id}': { id: product.id },
    '/products/{id}/reviews/{reviewId}': { id: product.id, reviewId: review.id },
    '/stock-levels/{sku}': { sku: stocked.sku },
  };
  const idsOf = (path: string) => ids[Object.keys(ids).find((prefix) => path === prefix || path.startsWith(`${prefix}/`)) ?? ''] ?? {};

  // Deletions last (order, product, user), so the other operations see real resources.
  const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })));
  const ordered = [...operations.filter(({ method }) => method !== 'DELETE'), ...operations.filter(({ method }) => method === 'DELETE').reverse()];
  const sent: string[] = [];
  const wrong: string[] = [];
  for (const { path, method, operation } of ordered) {
    if (notExpressible.has(operation.operationId)) continue;
    for (const parameter of operation.parameters ?? []) {
      // The shared parameters (Idempotency-Key, If-Match, traceparent) are optional, and left out.
      if ('in' in parameter && parameter.required && parameter.in !== 'path') wrong.push(`${operation.operationId}: the test sends no required ${parameter.in} parameter ${parameter.name}`);
    }
    const url = `/v1${path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(idsOf(path)[name] ?? 'unknown'))}`;
    const res = await call(method, url, { token: admin });
    sent.push(operation.operationId);
    const requiredBody = operation.requestBody?.required === true;
    const refusedForMissingPart = [400, 415, 422, 428].includes(res.status);
    if (requiredBody && !([400, 422].includes(res.status) && res.body?.code === 'VALIDATION_FAILED')) wrong.push(`${operation.operationId}: the document requires a body, yet without one the server answered ${res.status} ${res.body?.code ?? ''}`);
    if (operation.operationId === 'cancelOrder' && res.status !== 202) wrong.push(`cancelOrder: a cancellation without a body answered ${res.status}, not 202`);
    if (!requiredBody && (refusedForMissingPart || res.status >= 500)) wrong.push(`${operation.operationId}: sent without optional parts, answered ${res.status} ${res.body?.code ?? ''} ${res.body?.message ?? ''}`);
  }
  expect(wrong).toEqual([]);
  expect(sent).toHaveLength(operations.length - notExpressible.size);
}, 60_000);
