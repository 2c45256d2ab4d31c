// The OpenAPI 3.1 document of the public API, built from the gateway's route table (paths and
// methods) and the services' own zod schemas (bodies and query parameters), so nothing is
// written twice by hand. tools/openapi/generate.mjs bundles and runs this file.
import { z } from 'zod';
import { errorCatalog, fieldErrorCodes } from '../../libs/errors/src';
import { routeTable } from '../../apps/gateway/src/routing/route-table';
import * as users from '../../apps/users-service/src/users/schemas';
import * as products from '../../apps/catalog-service/src/products/schemas';
import * as reviews from '../../apps/catalog-service/src/reviews/schemas';
import * as orders from '../../apps/orders-service/src/orders/schemas';
import * as stock from '../../apps/inventory-service/src/stock/schemas';

type Schema = z.ZodType;

interface Operation {
  summary: string;
  body?: Schema;
  query?: z.ZodObject;
  /** Success status and what it returns. */
  success: [number, string];
  headers?: string[];
}

// What each route takes and answers: the schemas are the services' own validators.
const operations: Record<string, Operation> = {
  'POST /users': { summary: 'Sign up (public)', body: users.signUpBody, success: [201, 'The created user'], headers: ['Location', 'ETag'] },
  'GET /users': { summary: 'List users (admin)', query: users.listUsersQuery, success: [200, 'A page of users'] },
  'GET /users/{id}': { summary: 'Read a user (`me` for the caller)', success: [200, 'The user'], headers: ['ETag'] },
  'PATCH /users/{id}': { summary: 'Change the fields sent', body: users.patchUserBody, success: [200, 'The user'], headers: ['ETag'] },
  'PUT /users/{id}': { summary: 'Replace the user; fields not sent are cleared', body: users.replaceUserBody, success: [200, 'The user'], headers: ['ETag'] },
  'DELETE /users/{id}': { summary: 'Delete a user', success: [204, 'Deleted'] },
  'POST /tokens': { summary: 'Exchange email and password for an access token (public)', body: users.tokenBody, success: [200, 'A bearer token'] },
  'GET /orders': { summary: "List orders (a customer's own; all for admins)", query: orders.listOrdersQuery, success: [200, 'A page of orders'] },
  'POST /orders': { summary: 'Place an order (priced by the server; honours Idempotency-Key)', body: orders.createOrderBody, success: [201, 'The order'], headers: ['Location'] },
  'POST /orders/search': { summary: 'List orders with conditions in the body', body: orders.searchOrdersBody, success: [200, 'A page of orders'] },
  'GET /orders/{id}': { summary: 'Read an order', query: orders.getOrderQuery, success: [200, 'The order'], headers: ['ETag'] },
  'PATCH /orders/{id}': { summary: 'Change status (cancel) or coupon', body: orders.patchOrderBody, success: [200, 'The order'], headers: ['ETag'] },
  'PUT /orders/{id}': { summary: 'Replace items and coupon while PENDING', body: orders.replaceOrderBody, success: [200, 'The order'], headers: ['ETag'] },
  'DELETE /orders/{id}': { summary: 'Delete an order (its stock is returned)', success: [204, 'Deleted'] },
  'GET /orders/{id}/items': { summary: "List an order's items", query: orders.listItemsQuery, success: [200, 'A page of order items'] },
  'GET /orders/{id}/shipment': { summary: "Read an order's shipment", success: [200, 'The shipment'] },
  'PUT /orders/{id}/shipment': { summary: 'Create or replace the shipment (admin)', body: orders.shipmentBody, success: [200, 'The shipment'] },
  'GET /orders/{id}/cancellation': { summary: 'Read the cancellation record', success: [200, 'The cancellation'] },
  'POST /orders/{id}/cancellation': { summary: 'Request cancellation; completes asynchronously', body: orders.cancellationBody, success: [202, 'The cancellation, REQUESTED'], headers: ['Location'] },
  'GET /order-items/{id}': { summary: 'Read an order item', success: [200, 'The order item'] },
  'GET /products': { summary: 'List products', query: products.listProductsQuery, success: [200, 'A page of products'] },
  'POST /products': { summary: 'Create a product (admin)', body: products.createProductBody, success: [201, 'The product'], headers: ['Location', 'ETag'] },
  'GET /products/{id}': { summary: 'Read a product', success: [200, 'The product'], headers: ['ETag'] },
  'PATCH /products/{id}': { summary: 'Change a product (admin)', body: products.patchProductBody, success: [200, 'The product'], headers: ['ETag'] },
  'PUT /products/{id}': { summary: 'Replace a product (admin)', body: products.replaceProductBody, success: [200, 'The product'], headers: ['ETag'] },
  'DELETE /products/{id}': { summary: 'Delete a product (admin)', success: [204, 'Deleted'] },
  'GET /products/{id}/rating': { summary: "Read a product's rating", success: [200, 'The rating'] },
  'GET /products/{id}/reviews': { summary: "List a product's reviews", query: reviews.listReviewsQuery, success: [200, 'A page of reviews'] },
  'POST /products/{id}/reviews': { summary: 'Review a product (once per user)', body: reviews.createReviewBody, success: [201, 'The review'], headers: ['Location'] },
  'GET /products/{id}/reviews/{reviewId}': { summary: 'Read a review', success: [200, 'The review'] },
  'GET /stock-levels': { summary: 'List stock levels in SKU order, or only the SKUs named', query: stock.listStockLevelsQuery, success: [200, 'A page of stock levels'] },
  'GET /stock-levels/{sku}': { summary: "Read a SKU's stock level", success: [200, 'The stock level'], headers: ['ETag'] },
  'PUT /stock-levels/{sku}': { summary: 'Set what is on hand (admin); creates the SKU when new', body: stock.putStockLevelBody, success: [200, 'The stock level (201 when created)'], headers: ['ETag', 'Location'] },
  'GET /graphql': { summary: 'Run a GraphQL query (query, operationName, variables and extensions as parameters; mutations only over POST)', success: [200, 'GraphQL response with data and/or errors'] },
  'POST /graphql': { summary: 'Run a GraphQL query or mutation (federated); with Accept: application/json errors come with HTTP 200', success: [200, 'GraphQL response with data and/or errors'] },
  'GET /openapi.json': { summary: 'This document (public)', success: [200, 'OpenAPI 3.1 document'] },
};

const jsonSchema = (schema: Schema) => {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
    // Query values travel as text; document what they mean.
    override: (context) => {
      const queryType = (z.globalRegistry.get(context.zodSchema) as { queryType?: string } | undefined)?.queryType;
      if (queryType) Object.assign(context.jsonSchema, { type: queryType, queryType: undefined });
      const json = context.jsonSchema as Record<string, unknown>;
      if (json.type === 'integer' && !json.format) json.format = typeof json.maximum === 'number' && json.maximum <= 2_147_483_647 ? 'int32' : 'int64';
      if (json.format === 'date') json.example = '2026-11-21';
    },
  }) as Record<string, unknown>;
  return rest;
};

function operationId(method: string, path: string): string {
  const words = path.split('/').filter(Boolean).map((part) => (part.startsWith('{') ? `by-${part.slice(1, -1)}` : part));
  return [method.toLowerCase(), ...words].join('-').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()).replace(/[^A-Za-z0-9]/g, '');
}

const errorResponses: Record<string, { description: string; codes: string[] }> = {
  '400': { description: 'Unreadable request: malformed JSON, missing or wrongly typed field, unknown field or parameter, bad cursor', codes: ['VALIDATION_FAILED', 'MALFORMED_JSON', 'INVALID_CURSOR'] },
  '401': { description: 'Missing, invalid or expired bearer token', codes: ['UNAUTHENTICATED', 'INVALID_CREDENTIALS'] },
  '404': { description: 'Absent, or not yours to see', codes: ['NOT_FOUND', 'UNSUPPORTED_VERSION'] },
  '429': { description: 'Too many requests; see Retry-After and RateLimit', codes: ['RATE_LIMITED'] },
  default: { description: 'Any other error, in the same format', codes: Object.keys(errorCatalog) },
};

export function buildDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routeTable) {
    const path = route.pattern.replace(/:([A-Za-z]+)/g, '{$1}');
    for (const method of route.methods) {
      const key = `${method} ${path}`;
      const operation = operations[key];
      if (!operation) throw new Error(`No OpenAPI description for ${key}: add it to tools/openapi/document.ts`);
      const parameters: Record<string, unknown>[] = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
      if (operation.query) {
        const shape = jsonSchema(operation.query) as { properties?: Record<string, unknown>; required?: string[] };
        for (const [name, schema] of Object.entries(shape.properties ?? {})) parameters.push({ name, in: 'query', required: shape.required?.includes(name) ?? false, schema });
      }
      if (path === '/orders' && method === 'POST') parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } });
      if (['PATCH', 'PUT', 'DELETE'].includes(method) && operation.headers?.includes('ETag')) parameters.push({ name: 'If-Match', in: 'header', required: false, schema: { type: 'string' } });
      const [status, description] = operation.success;
      const success: Record<string, unknown> = { description };
      if (status !== 204) success.content = { 'application/json': { schema: { type: 'object' } } };
      if (operation.headers?.length) success.headers = Object.fromEntries(operation.headers.map((name) => [name, { schema: { type: 'string' } }]));
      paths[path] ??= {};
      paths[path][method.toLowerCase()] = {
        operationId: operationId(method, path),
        summary: operation.summary,
        tags: [route.upstream],
        ...(route.auth === 'public' ? { security: [] } : {}),
        ...(parameters.length ? { parameters } : {}),
        ...(operation.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(operation.body) } } } } : {}),
        responses: {
          [String(status)]: success,
          ...Object.fromEntries(
            Object.entries(errorResponses).map(([code, { description: text }]) => [code, { description: text, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } }, 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } }]),
          ),
        },
      };
    }
  }
  const fieldError = { type: 'object', required: ['field', 'code', 'message'], properties: { field: { type: 'string' }, code: { type: 'string', enum: [...fieldErrorCodes] }, message: { type: 'string' } } };
  const error = {
    type: 'object',
    required: ['code', 'message', 'traceId', 'errors'],
    properties: { code: { type: 'string', description: 'Stable; clients branch on it. Unknown codes get default handling.', examples: Object.keys(errorCatalog) }, message: { type: 'string' }, traceId: { type: 'string' }, errors: { type: 'array', items: fieldError } },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Order and user API',
      version: '1.0.0',
      description: 'Users, orders, products, shipments, ratings and reviews. One error format everywhere; cursor-paged lists; ids are strings; money is an integer in the smallest currency unit.',
      contact: { name: 'API team', url: 'https://docs.example.com/api', email: 'api@example.com' },
      'x-api-id': 'c6e8d0f0-0c0e-4d0e-9f0b-6b7b5d5f9a01',
      'x-audience': 'external-public',
    },
    servers: [{ url: '/v1', description: 'This gateway' }],
    security: [{ bearer: [] }],
    tags: [
      { name: 'users', description: 'Users, sign-up and tokens' },
      { name: 'orders', description: 'Orders, items, shipments and cancellations' },
      { name: 'catalog', description: 'Products, ratings and reviews' },
      { name: 'graphql', description: 'The federated query interface' },
      { name: 'openapi', description: 'This document' },
    ],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        Error: error,
        Problem: {
          type: 'object',
          description: 'RFC 9457 problem details, with the error format\'s fields as extension members.',
          required: ['type', 'title', 'status', 'detail', 'instance', ...error.required],
          properties: {
            type: { type: 'string', format: 'uri', example: 'https://docs.example.com/errors/not-found' },
            title: { type: 'string' },
            status: { type: 'integer', format: 'int32' },
            detail: { type: 'string' },
            instance: { type: 'string', format: 'uri-reference' },
            ...error.properties,
          },
        },
      },
    },
  };
}
