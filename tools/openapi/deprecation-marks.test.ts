// The OpenAPI document as generated from a deprecation registry: each REST or webhook element it names is
// marked deprecated with its dates, replacement and notice, its operation may answer 410, and
// nothing else changes.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildDocument } from './document';
import { apiEndpoints } from './endpoints';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function registry(elements: [string, string][]): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'marks-')), 'deprecations.yaml');
  writeFileSync(file, `deprecations:\n${elements.map(([element, replacement]) => `  - element: "${element}"\n    replacement: "${replacement}"\n    announced: 2026-12-01\n    sunset: 2027-06-01\n    notice: https://docs.example.com/changes/${element.length}\n`).join('')}`);
  return file;
}

const marks = (element: string, replacement: string, externalDocs = true) => ({
  deprecated: true,
  'x-deprecation-announced': '2026-12-01',
  'x-sunset': '2027-06-01',
  'x-replacement': replacement,
  'x-deprecation-notice': `https://docs.example.com/changes/${element.length}`,
  ...(externalDocs ? { externalDocs: { description: 'Deprecated on 2026-12-01, removed on 2027-06-01', url: `https://docs.example.com/changes/${element.length}` } } : {}),
});

describe('the OpenAPI document marked from the deprecation registry', () => {
  const plain = buildDocument() as Json;
  const entries: [string, string][] = [
    ['rest:GET /v1/order-items/{id}', 'rest:GET /v1/orders/{id}/items'],
    ['rest:GET /v1/orders query.sort', 'rest:POST /v1/orders/search'],
    ['rest:POST /v1/orders request.body.items[].quantity', 'none'],
    ['rest:GET /v1/orders/{id}/shipment response.200.body.trackingNumber', 'rest:GET /v1/orders/{id}/shipment response.200.body.trackingUrl'],
    ['webhook:order.created body.data.couponCode', 'webhook:order.created body.data.coupon'],
    ['webhook:user.deleted', 'none'],
  ];
  const marked = buildDocument(registry(entries)) as Json;

  it('marks an operation, with the notice as externalDocs, and lets it answer 410', () => {
    expect(marked.paths['/order-items/{id}'].get).toMatchObject(marks(entries[0][0], 'GET /v1/orders/{id}/items'));
    expect(marked.paths['/order-items/{id}'].get.responses['410']).toEqual({ $ref: '#/components/responses/Gone' });
    expect(plain.paths['/order-items/{id}'].get.responses['410']).toBeUndefined();
  });

  it('marks a query parameter', () => {
    const sort = marked.paths['/orders'].get.parameters.find((parameter: Json) => parameter.name === 'sort');
    expect(sort).toMatchObject(marks(entries[1][0], 'POST /v1/orders/search', false));
  });

  it('marks a request body property inside array items', () => {
    const schema = marked.paths['/orders'].post.requestBody.content['application/json'].schema;
    const items = schema.$ref ? marked.components.schemas[schema.$ref.split('/').pop()].properties.items : schema.properties.items;
    expect(items.items.properties.quantity).toMatchObject(marks(entries[2][0], 'none'));
  });

  it('marks a response property in its named schema', () => {
    expect(marked.components.schemas.Shipment.properties.trackingNumber).toMatchObject(marks(entries[3][0], 'GET /v1/orders/{id}/shipment response.200.body.trackingUrl'));
    expect(marked.components.schemas.Shipment.properties.trackingNumber.description).toBe(plain.components.schemas.Shipment.properties.trackingNumber.description);
  });

  it('marks a webhook payload field in its event schema, and a whole webhook with its notice', () => {
    expect(marked.components.schemas.OrderCreatedEvent.properties.data.properties.couponCode).toMatchObject(marks(entries[4][0], 'order.created body.data.coupon', false));
    expect(marked.webhooks['user.deleted'].post).toMatchObject(marks(entries[5][0], 'none'));
    expect(plain.webhooks['user.deleted'].post.deprecated).toBeUndefined();
  });

  it('changes nothing else (the 410 answer exists only where something is deprecated)', () => {
    const strip = (value: unknown): unknown =>
      JSON.parse(JSON.stringify(value, (key, inner) => (key === 'deprecated' || key.startsWith('x-deprecation') || key === 'x-sunset' || key === 'x-replacement' || key === 'externalDocs' || key === '410' || key === 'Gone' ? undefined : inner)));
    expect(strip(marked)).toEqual(strip(plain));
  });

  it("lists a later major's route at its full path, and marks each major's operation by its own element", () => {
    const getProduct = apiEndpoints.find((endpoint) => endpoint.operationId === 'getProduct')!;
    const endpoints = [...apiEndpoints, { ...getProduct, version: 'v2' as const, operationId: 'getProductV2' }];
    const versioned = buildDocument(registry([['rest:GET /v1/products/{id}', 'rest:GET /v2/products/{id}'], ['rest:GET /v2/products/{id} path.id', 'none']]), endpoints) as Json;
    expect(versioned.servers).toEqual([{ url: '/v1', description: 'This gateway' }]);
    expect(versioned.paths['/v2/products/{id}'].servers).toEqual([{ url: '/', description: 'This gateway, API version v2' }]);
    expect(versioned.paths['/v2/products/{id}'].get.operationId).toBe('getProductV2');
    expect(versioned.paths['/v2/products/{id}'].get.deprecated).toBeUndefined();
    expect(versioned.paths['/products/{id}'].get).toMatchObject(marks('rest:GET /v1/products/{id}', 'GET /v2/products/{id}'));
    expect(versioned.paths['/v2/products/{id}'].get.parameters.find((parameter: Json) => parameter.name === 'id')).toMatchObject({ deprecated: true, 'x-replacement': 'none' });
    // The rest of /v2 is v1's, served unchanged: not listed twice.
    expect(Object.keys(versioned.paths).filter((key) => key.startsWith('/v2/'))).toEqual(['/v2/products/{id}']);
  });
});
