// The OpenAPI 3.1 document of the public API, built from the gateway's route table (paths and
// methods) and the services' own zod schemas (request bodies, query parameters and the
// representations their mappers are typed with), so nothing is written twice by hand.
// tools/openapi/generate.mjs bundles and runs this file.
import { z } from 'zod';
import { errorBodySchema, errorCatalog, problemBodySchema, type ErrorCode } from '@platform/errors';
import { eventCatalog, eventJsonSchemas, eventTypes } from '@platform/events';
import { listEnvelopeSchema } from '@platform/paging';
import { loadDeprecations } from '@platform/deprecations';
import { markDeprecations } from './deprecation-marks';
// Apps have no import path (nothing may import an app); this generator alone reads their schemas.
/* eslint-disable @nx/enforce-module-boundaries */
import { routeTable, type RouteDefinition } from '../../apps/gateway/src/routing/route-table';
import * as users from '../../apps/users-service/src/users/schemas';
import * as userShapes from '../../apps/users-service/src/users/representation';
import * as webhooks from '../../apps/users-service/src/webhooks/schemas';
import * as webhookShapes from '../../apps/users-service/src/webhooks/representation';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../apps/users-service/src/webhooks/retry-schedule';
import * as apiKeys from '../../apps/users-service/src/api-keys/schemas';
import * as apiKeyShapes from '../../apps/users-service/src/api-keys/representation';
import * as products from '../../apps/catalog-service/src/products/schemas';
import * as productShapes from '../../apps/catalog-service/src/products/representation';
import * as reviews from '../../apps/catalog-service/src/reviews/schemas';
import { reviewRepresentation } from '../../apps/catalog-service/src/reviews/representation';
import * as orders from '../../apps/orders-service/src/orders/schemas';
import * as orderShapes from '../../apps/orders-service/src/orders/representation';
import { cancellationRepresentation } from '../../apps/orders-service/src/cancellations/representation';
import * as stock from '../../apps/inventory-service/src/stock/schemas';
import { stockLevelRepresentation } from '../../apps/inventory-service/src/stock/representation';
import { deprecationUsageRepresentation } from '../../apps/gateway/src/usage/representation';
/* eslint-enable @nx/enforce-module-boundaries */

type Schema = z.ZodType;

/** A GraphQL-over-HTTP exchange: what the federated graph takes and answers (errors come with 200). */
const graphqlRequest = z.object({
  query: z.string().min(1).optional().meta({ description: 'The document. Optional when extensions.persistedQuery names a trusted document.' }),
  extensions: z.record(z.string(), z.unknown()).optional(),
  variables: z.record(z.string(), z.unknown()).nullable().optional(),
  operationName: z.string().nullable().optional(),
});
const graphqlQueryParameters = z.strictObject({
  query: z.string().min(1).optional().meta({ description: 'The document; a query (mutations only over POST). Optional when extensions names a trusted document.' }),
  variables: z.string().optional().meta({ description: 'JSON object of the variables.' }),
  operationName: z.string().optional(),
  extensions: z.string().optional().meta({ description: 'JSON object, e.g. {"persistedQuery":{"version":1,"sha256Hash":"<hex>"}} for a trusted document.' }),
});
const graphqlResponse = z.object({
  data: z.record(z.string(), z.unknown()).nullable().optional(),
  extensions: z
    .object({ cost: z.object({ requested: z.number().int().min(0), limit: z.number().int().min(1) }).optional() })
    .optional()
    .meta({ description: '`cost`: what the operation cost and the limit (a scalar field 1, an object 2 plus its fields, a list its selection times first).' }),
  errors: z
    .array(z.looseObject({ message: z.string(), path: z.array(z.union([z.string(), z.number().int()])).optional(), extensions: z.record(z.string(), z.unknown()).optional() }))
    .optional()
    .meta({ description: '`extensions.code` carries the same codes as the REST error format.' }),
});
const openApiSection = z.record(z.string(), z.unknown());
const openapiDocument = z.object({
  openapi: z.string(),
  info: openApiSection,
  servers: z.array(openApiSection),
  security: z.array(openApiSection),
  tags: z.array(openApiSection),
  paths: openApiSection,
  webhooks: openApiSection,
  components: openApiSection,
});

/** Every named schema of the document; representations refer to each other by these names. */
const components: [string, Schema][] = [
  ['User', userShapes.userRepresentation],
  ['Token', userShapes.tokenRepresentation],
  ['ApiKey', apiKeyShapes.apiKeyRepresentation],
  ['IssuedApiKey', apiKeyShapes.issuedApiKeyRepresentation],
  ['ApiKeyPage', listEnvelopeSchema(apiKeyShapes.apiKeyRepresentation)],
  ['OrderItem', orderShapes.orderItemRepresentation],
  ['Order', orderShapes.orderRepresentation],
  ['Shipment', orderShapes.shipmentRepresentation],
  ['Cancellation', cancellationRepresentation],
  ['Product', productShapes.productRepresentation],
  ['Rating', productShapes.ratingRepresentation],
  ['Review', reviewRepresentation],
  ['UserPage', listEnvelopeSchema(userShapes.userRepresentation)],
  ['OrderPage', listEnvelopeSchema(orderShapes.orderRepresentation)],
  ['OrderItemPage', listEnvelopeSchema(orderShapes.orderItemRepresentation)],
  ['ProductPage', listEnvelopeSchema(productShapes.productRepresentation)],
  ['ReviewPage', listEnvelopeSchema(reviewRepresentation)],
  ['StockLevel', stockLevelRepresentation],
  ['StockLevelPage', listEnvelopeSchema(stockLevelRepresentation)],
  ['WebhookEndpoint', webhookShapes.webhookEndpointRepresentation],
  ['WebhookEndpointWithSecret', webhookShapes.webhookEndpointWithSecretRepresentation],
  ['WebhookEndpointPage', listEnvelopeSchema(webhookShapes.webhookEndpointRepresentation)],
  ['WebhookAttempt', webhookShapes.webhookAttemptRepresentation],
  ['WebhookDelivery', webhookShapes.webhookDeliveryRepresentation],
  ['WebhookDeliveryPage', listEnvelopeSchema(webhookShapes.webhookDeliveryRepresentation)],
  ['Event', webhookShapes.webhookEventRepresentation],
  ['EventPage', listEnvelopeSchema(webhookShapes.webhookEventRepresentation)],
  ['DeprecationUsagePage', listEnvelopeSchema(deprecationUsageRepresentation)],
  ['GraphQLResponse', graphqlResponse],
  ['OpenApiDocument', openapiDocument],
  ['EventSchemasDocument', z.object({ $schema: z.string(), $id: z.string(), title: z.string(), description: z.string(), $defs: z.record(z.string(), z.record(z.string(), z.unknown())) })],
  ['Error', errorBodySchema],
  ['Problem', problemBodySchema],
];
type ComponentName = (typeof components)[number][0];

export interface Operation {
  /** A verb phrase: what a generated client names the call. */
  operationId: string;
  summary: string;
  body?: Schema;
  /** Whether the body may be left out; unset, it may when the schema takes `{}`, as parseBody reads a missing body. */
  bodyRequired?: boolean;
  query?: z.ZodObject;
  /** The fields `sort` accepts (the service's own list). */
  sortFields?: readonly string[];
  /** Success status, its description and the schema it returns (none for 204). */
  success: [number, string, ComponentName?];
  /** Headers of the success response besides those every response carries. */
  headers?: (keyof typeof successHeaders)[];
  /** Answers 403 (admin only, or a filter naming someone else). */
  forbidden?: boolean;
  /** Takes If-Match (optimistic concurrency): 412 on a stale ETag. */
  ifMatch?: boolean;
  /** The 409 codes it can answer. */
  conflicts?: ErrorCode[];
  /** A GraphQL document it cannot run (syntax, depth, cost) is a 400 in GraphQL's own format. */
  graphqlErrors?: boolean;
  /** GraphQL over GET: a mutation is 405 (GET must not change anything). */
  queriesOnly?: boolean;
  /** A PUT that creates what did not exist answers 201 (with Location) and this description. */
  created?: string;
  /** Takes Idempotency-Key: a retry with the same key applies once. */
  idempotencyKey?: boolean;
}

// What each route takes and answers: the schemas are the services' own validators. A route of a
// later major version is described under its prefixed path (`GET /v2/products/{id}`).
export const operations: Record<string, Operation> = {
  'POST /users': { operationId: 'signUp', summary: 'Sign up (public)', body: users.signUpBody, success: [201, 'The created user', 'User'], headers: ['Location', 'ETag'], conflicts: ['EMAIL_TAKEN'] },
  'GET /users': { operationId: 'listUsers', summary: 'List users (admin)', query: users.listUsersQuery, sortFields: users.userSortFields, success: [200, 'A page of users', 'UserPage'], forbidden: true },
  'GET /users/{id}': { operationId: 'getUser', summary: 'Read a user (`me` for the caller)', success: [200, 'The user', 'User'], headers: ['ETag'] },
  'PATCH /users/{id}': { operationId: 'updateUser', summary: 'Change the fields sent', body: users.patchUserBody, success: [200, 'The user', 'User'], headers: ['ETag'], ifMatch: true, conflicts: ['EMAIL_TAKEN', 'CONFLICT'] },
  'PUT /users/{id}': { operationId: 'replaceUser', summary: 'Replace the user; fields not sent are cleared', body: users.replaceUserBody, success: [200, 'The user', 'User'], headers: ['ETag'], ifMatch: true, conflicts: ['EMAIL_TAKEN', 'CONFLICT'] },
  'DELETE /users/{id}': { operationId: 'deleteUser', summary: 'Delete a user', success: [204, 'Deleted'] },
  'POST /tokens': { operationId: 'createToken', summary: 'Exchange email and password for an access token (public)', body: users.tokenBody, success: [200, 'A bearer token', 'Token'] },
  'POST /webhook-endpoints': {
    operationId: 'createWebhookEndpoint',
    summary: 'Register a URL to receive events at; the signing secret is in this answer only',
    body: webhooks.createEndpointBody,
    success: [201, 'The endpoint and its signing secret (shown once)', 'WebhookEndpointWithSecret'],
    headers: ['Location', 'ETag'],
    forbidden: true,
  },
  'GET /webhook-endpoints': { operationId: 'listWebhookEndpoints', summary: "List the caller's webhook endpoints", query: webhooks.listEndpointsQuery, sortFields: webhooks.endpointSortFields, success: [200, 'A page of webhook endpoints', 'WebhookEndpointPage'] },
  'GET /webhook-endpoints/{id}': { operationId: 'getWebhookEndpoint', summary: 'Read a webhook endpoint (never its secret)', success: [200, 'The endpoint', 'WebhookEndpoint'], headers: ['ETag'] },
  'PATCH /webhook-endpoints/{id}': { operationId: 'updateWebhookEndpoint', summary: 'Change the fields sent; status ENABLED or DISABLED', body: webhooks.patchEndpointBody, success: [200, 'The endpoint', 'WebhookEndpoint'], headers: ['ETag'], forbidden: true, ifMatch: true },
  'DELETE /webhook-endpoints/{id}': { operationId: 'deleteWebhookEndpoint', summary: 'Delete a webhook endpoint and its deliveries', success: [204, 'Deleted'] },
  'POST /webhook-endpoints/{id}/secret/rotation': {
    operationId: 'rotateWebhookSecret',
    summary: 'A new signing secret, shown once; the previous one keeps signing for 24 hours',
    success: [200, 'The endpoint and its new secret', 'WebhookEndpointWithSecret'],
    headers: ['ETag'],
    conflicts: ['CONFLICT'],
  },
  'GET /webhook-endpoints/{id}/deliveries': { operationId: 'listWebhookDeliveries', summary: "List an endpoint's deliveries with their attempts, status codes and latency", query: webhooks.listDeliveriesQuery, sortFields: webhooks.endpointSortFields, success: [200, 'A page of deliveries', 'WebhookDeliveryPage'] },
  'POST /webhook-endpoints/{id}/deliveries/{deliveryId}/retry': { operationId: 'retryWebhookDelivery', summary: 'Send a delivery again now', success: [202, 'The delivery, due now', 'WebhookDelivery'], conflicts: ['CONFLICT'] },
  'GET /events': { operationId: 'listEvents', summary: 'List events about your resources (every event for admins), newest first; kept 30 days', query: webhooks.listEventsQuery, sortFields: webhooks.eventSortFields, success: [200, 'A page of events', 'EventPage'] },
  'GET /api-keys': { operationId: 'listApiKeys', summary: "List the caller's API keys, newest first (never their secrets)", query: apiKeys.listApiKeysQuery, success: [200, 'A page of API keys', 'ApiKeyPage'] },
  'POST /api-keys': {
    operationId: 'createApiKey',
    summary: 'Issue an API key for a machine caller; the key is in this answer only',
    body: apiKeys.createApiKeyBody,
    success: [201, 'The key, with its secret (shown once)', 'IssuedApiKey'],
    headers: ['Location'],
    conflicts: ['API_KEY_LIMIT_REACHED'],
  },
  'GET /api-keys/{id}': { operationId: 'getApiKey', summary: "Read one of the caller's API keys", success: [200, 'The key (without its secret)', 'ApiKey'] },
  'DELETE /api-keys/{id}': { operationId: 'revokeApiKey', summary: 'Revoke an API key: every gateway refuses it within 5 s', success: [204, 'Revoked'] },
  'POST /api-keys/{id}/rotation': {
    operationId: 'rotateApiKey',
    summary: 'Replace an API key: a new key (shown once), the old one working for the overlap chosen (at most 7 days)',
    body: apiKeys.rotateApiKeyBody,
    success: [201, 'The new key, with its secret (shown once)', 'IssuedApiKey'],
    headers: ['Location'],
    conflicts: ['API_KEY_NOT_ACTIVE'],
  },
  'GET /orders': { operationId: 'listOrders', summary: "List orders (a customer's own; all for admins)", query: orders.listOrdersQuery, sortFields: orders.orderSortFields, success: [200, 'A page of orders', 'OrderPage'], forbidden: true },
  'POST /orders': {
    operationId: 'createOrder',
    summary: 'Place an order (priced by the server; honours Idempotency-Key)',
    body: orders.createOrderBody, idempotencyKey: true,
    success: [201, 'The order (or, for a repeated Idempotency-Key, the first response again)', 'Order'],
    headers: ['Location', 'ETag'],
    conflicts: ['OUT_OF_STOCK', 'CONFLICT'],
  },
  'POST /orders/search': { operationId: 'searchOrders', summary: 'List orders with conditions in the body', body: orders.searchOrdersBody, success: [200, 'A page of orders', 'OrderPage'], forbidden: true },
  'GET /orders/{id}': { operationId: 'getOrder', summary: 'Read an order', query: orders.getOrderQuery, success: [200, 'The order', 'Order'], headers: ['ETag'] },
  'PATCH /orders/{id}': {
    operationId: 'updateOrder',
    summary: 'Change status (cancel; other moves are for admins) or coupon',
    body: orders.patchOrderBody,
    success: [200, 'The order', 'Order'],
    headers: ['ETag'],
    forbidden: true,
    ifMatch: true,
    conflicts: ['ORDER_ALREADY_CANCELED', 'ORDER_NOT_CANCELABLE', 'ORDER_NOT_EDITABLE', 'CONFLICT'],
  },
  'PUT /orders/{id}': {
    operationId: 'replaceOrder',
    summary: 'Replace items and coupon while PENDING',
    body: orders.replaceOrderBody,
    success: [200, 'The order', 'Order'],
    headers: ['ETag'],
    ifMatch: true,
    conflicts: ['ORDER_NOT_EDITABLE', 'OUT_OF_STOCK', 'CONFLICT'],
  },
  'DELETE /orders/{id}': { operationId: 'deleteOrder', summary: 'Delete an order (its stock is returned)', success: [204, 'Deleted'], ifMatch: true, conflicts: ['CONFLICT'] },
  'GET /orders/{id}/items': { operationId: 'listOrderItems', summary: "List an order's items", query: orders.listItemsQuery, success: [200, 'A page of order items', 'OrderItemPage'] },
  'GET /orders/{id}/shipment': { operationId: 'getShipment', summary: "Read an order's shipment", success: [200, 'The shipment', 'Shipment'] },
  'PUT /orders/{id}/shipment': { operationId: 'putShipment', summary: 'Create or replace the shipment (admin)', body: orders.shipmentBody, success: [200, 'The shipment', 'Shipment'], forbidden: true, conflicts: ['CONFLICT'] },
  'GET /orders/{id}/cancellation': { operationId: 'getCancellation', summary: 'Read the cancellation record', success: [200, 'The cancellation', 'Cancellation'] },
  'POST /orders/{id}/cancellation': {
    operationId: 'cancelOrder',
    summary: 'Request cancellation; completes asynchronously',
    body: orders.cancellationBody,
    success: [202, 'The cancellation, REQUESTED (or the one already requested)', 'Cancellation'],
    headers: ['Location'],
    conflicts: ['ORDER_ALREADY_CANCELED', 'ORDER_NOT_CANCELABLE', 'CONFLICT'],
  },
  'GET /order-items/{id}': { operationId: 'getOrderItem', summary: 'Read an order item', success: [200, 'The order item', 'OrderItem'] },
  'GET /products': { operationId: 'listProducts', summary: 'List products', query: products.listProductsQuery, sortFields: products.productSortFields, success: [200, 'A page of products', 'ProductPage'] },
  'POST /products': { operationId: 'createProduct', summary: 'Create a product (admin)', body: products.createProductBody, success: [201, 'The product', 'Product'], headers: ['Location', 'ETag'], forbidden: true, conflicts: ['SKU_TAKEN'] },
  'GET /products/{id}': { operationId: 'getProduct', summary: 'Read a product', success: [200, 'The product', 'Product'], headers: ['ETag'] },
  'PATCH /products/{id}': { operationId: 'updateProduct', summary: 'Change a product (admin)', body: products.patchProductBody, success: [200, 'The product', 'Product'], headers: ['ETag'], forbidden: true, ifMatch: true, conflicts: ['SKU_TAKEN', 'CONFLICT'] },
  'PUT /products/{id}': { operationId: 'replaceProduct', summary: 'Replace a product (admin)', body: products.replaceProductBody, success: [200, 'The product', 'Product'], headers: ['ETag'], forbidden: true, ifMatch: true, conflicts: ['SKU_TAKEN', 'CONFLICT'] },
  'DELETE /products/{id}': { operationId: 'deleteProduct', summary: 'Delete a product (admin)', success: [204, 'Deleted'], forbidden: true },
  'GET /products/{id}/rating': { operationId: 'getProductRating', summary: "Read a product's rating", success: [200, 'The rating', 'Rating'] },
  'GET /products/{id}/reviews': { operationId: 'listProductReviews', summary: "List a product's reviews", query: reviews.listReviewsQuery, sortFields: reviews.reviewSortFields, success: [200, 'A page of reviews', 'ReviewPage'] },
  'POST /products/{id}/reviews': { operationId: 'createProductReview', summary: 'Review a product (once per user)', body: reviews.createReviewBody, success: [201, 'The review', 'Review'], headers: ['Location'], conflicts: ['REVIEW_EXISTS'] },
  'GET /products/{id}/reviews/{reviewId}': { operationId: 'getProductReview', summary: 'Read a review', success: [200, 'The review', 'Review'] },
  'GET /stock-levels': { operationId: 'listStockLevels', summary: 'List stock levels in SKU order, or only the SKUs named', query: stock.listStockLevelsQuery, sortFields: ['sku'], success: [200, 'A page of stock levels', 'StockLevelPage'] },
  'GET /stock-levels/{sku}': { operationId: 'getStockLevel', summary: "Read a SKU's stock level", success: [200, 'The stock level', 'StockLevel'], headers: ['ETag'] },
  'PUT /stock-levels/{sku}': { operationId: 'setStockLevel', summary: 'Set what is on hand (admin); creates the SKU when new (201)', body: stock.putStockLevelBody, success: [200, 'The stock level, replaced', 'StockLevel'], created: 'The stock level of a SKU inventory did not know', headers: ['ETag'], forbidden: true, ifMatch: true, idempotencyKey: true, conflicts: ['CONFLICT'] },
  'GET /graphql': { operationId: 'queryGraphqlOverGet', summary: 'Run a GraphQL query given as parameters (a mutation over GET is 405); with Accept: application/json errors come with HTTP 200', query: graphqlQueryParameters, success: [200, 'GraphQL response with data and/or errors', 'GraphQLResponse'], graphqlErrors: true, queriesOnly: true },
  'POST /graphql': { operationId: 'queryGraphql', summary: 'Run a GraphQL query or mutation (federated); with Accept: application/json errors come with HTTP 200', body: graphqlRequest, bodyRequired: true, success: [200, 'GraphQL response with data and/or errors', 'GraphQLResponse'], graphqlErrors: true },
  'GET /deprecations': { operationId: 'listDeprecations', summary: 'Every deprecated element with its dates and who still uses it (admin)', success: [200, 'The deprecation registry with callers and calls in the last 1, 7 and 30 days', 'DeprecationUsagePage'], forbidden: true },
  'GET /me/deprecations': { operationId: 'listMyDeprecations', summary: 'The deprecated elements the caller used in the last 30 days', success: [200, 'The deprecated elements the caller used', 'DeprecationUsagePage'] },
  'GET /openapi.json': { operationId: 'getOpenApiDocument', summary: 'This document (public)', success: [200, 'OpenAPI 3.1 document', 'OpenApiDocument'] },
  'GET /event-schemas': { operationId: 'getEventSchemas', summary: "The JSON Schema (2020-12) of every domain event's data, by event type (public)", success: [200, 'JSON Schema document', 'EventSchemasDocument'] },
};

/**
 * The JSON Schema document published beside this one: every event type's data schema under
 * `$defs`, keyed by type; each one's `$id` is the `dataschema` its CloudEvents carry.
 */
export function buildEventSchemas(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: 'urn:order-platform:events',
    title: 'Order platform domain events',
    description: 'The data of each event type, as carried in a CloudEvents 1.0 envelope (datacontenttype application/json) whose dataschema is the $id here.',
    $defs: eventJsonSchemas(),
  };
}

/** `order.cancellation.completed` → `OrderCancellationCompletedEvent`: the component of a webhook's body. */
const eventComponentName = (type: string) => `${type.split(/[._]/).map((part) => part[0].toUpperCase() + part.slice(1)).join('')}Event`;

/** Each event type's webhook body: the Event envelope (GET /events lists the same) with its data's schema. */
function eventComponents(): Record<string, Record<string, unknown>> {
  const schemas = eventJsonSchemas() as Record<string, Record<string, unknown>>;
  return Object.fromEntries(
    eventTypes.map((type) => {
      const { title: _title, description: _description, ...data } = asOpenApiSchema(schemas[type]);
      return [
        eventComponentName(type),
        {
          type: 'object',
          description: eventCatalog[type].description,
          required: ['id', 'type', 'timestamp', 'subject', 'data'],
          properties: {
            id: { type: 'string', format: 'uuid', description: 'The event id; the `webhook-id` header carries it too. Deduplicate on it.' },
            type: { type: 'string', const: type },
            timestamp: { type: 'string', format: 'date-time', example: '2026-11-21T09:30:00.000Z' },
            subject: { type: 'string', description: `\`${eventCatalog[type].aggregate}/<id>\`: what the event is about.` },
            data,
          },
        },
      ];
    }),
  );
}

const webhookHeaders = [
  { name: 'webhook-id', in: 'header', required: true, description: 'The event id: the same on every attempt of a delivery. Deduplicate on it.', schema: { type: 'string', format: 'uuid' } },
  { name: 'webhook-timestamp', in: 'header', required: true, description: 'Seconds since the Unix epoch when this attempt was signed; refuse deliveries more than 5 minutes away from your clock.', schema: { type: 'string', pattern: '^\\d+$' } },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description: 'Space-separated `v1,<base64 HMAC-SHA256>` signatures of `<webhook-id>.<webhook-timestamp>.<body>` (Standard Webhooks), one per secret in force: two for 24 hours after a rotation.',
    schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$' },
  },
];

/** The OpenAPI 3.1 `webhooks`: what we POST to a registered endpoint, one entry per event type. */
function webhookOperations(): Record<string, unknown> {
  const schedule = RETRY_DELAYS_MS.map((ms) => (ms < 60_000 ? `${ms / 1000} s` : ms < 3_600_000 ? `${ms / 60_000} min` : `${ms / 3_600_000} h`)).join(', ');
  return Object.fromEntries(
    eventTypes.map((type) => [
      type,
      {
        post: {
          operationId: `on${eventComponentName(type)}`,
          summary: `${type}: ${eventCatalog[type].description}`,
          description: `Sent to every enabled endpoint subscribed to ${type} (yours only, or every one with scope ALL). A 2xx within 15 s acknowledges it; anything else (3xx included: redirects are not followed) is retried ${MAX_ATTEMPTS - 1} times after ${schedule}. An endpoint failing for 5 days is disabled.`,
          tags: ['webhooks'],
          security: [],
          parameters: webhookHeaders,
          requestBody: { required: true, content: { 'application/json': { schema: ref('schemas', eventComponentName(type)) } } },
          responses: {
            '200': { description: 'Any 2xx acknowledges the delivery; the body is read up to 4 KiB and otherwise ignored.' },
          },
        },
      },
    ]),
  );
}

/** Drops what a JSON Schema of zod carries that has no place in an OpenAPI component. */
function asOpenApiSchema(json: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, $id: _id, ...rest } = json;
  return rest;
}

/** Formats and examples a reader (and Zalando's rules) expect on numbers and times. */
const describeFormat = (json: Record<string, unknown>) => {
  if (json.type === 'integer' && !json.format) json.format = typeof json.maximum === 'number' && json.maximum <= 2_147_483_647 ? 'int32' : 'int64';
  if (json.type === 'number' && !json.format) json.format = 'double';
  if (json.format === 'date') json.example = '2026-11-21';
  if (json.format === 'date-time') json.example = '2026-11-21T09:30:00.000Z';
};

const requestSchema = (schema: Schema) =>
  asOpenApiSchema(
    z.toJSONSchema(schema, {
      io: 'input',
      unrepresentable: 'any',
      target: 'draft-2020-12',
      // Query values travel as text; document what they mean.
      override: (context) => {
        const json = context.jsonSchema as Record<string, unknown>;
        const meta = z.globalRegistry.get(context.zodSchema) as { queryType?: string; default?: unknown } | undefined;
        if (meta?.queryType) Object.assign(json, { type: meta.queryType, queryType: undefined });
        if (meta?.default !== undefined) json.default = meta.default;
        describeFormat(json);
      },
    }) as Record<string, unknown>,
  );

/**
 * The response components. Objects list every field the server always sends in `required`; they
 * stay open (no `additionalProperties: false`) so that a new field is a compatible change for
 * clients. The contract tests close them: the server sends nothing the document does not name.
 */
function componentSchemas(): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of components) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io: 'output',
    unrepresentable: 'any',
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
    override: (context) => {
      const json = context.jsonSchema as Record<string, unknown>;
      describeFormat(json);
      if (json.additionalProperties === false) delete json.additionalProperties;
      // A JSON number's own limit, not ours.
      if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
    },
  }) as { schemas: Record<string, Record<string, unknown>> };
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, asOpenApiSchema(schema)]));
}

const ref = (kind: 'schemas' | 'responses' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

// Headers, as the gateway and the services send them.
const headers = {
  'X-Request-Id': { description: 'The trace id of this request (W3C trace id, 32 hex digits); also `traceId` in error bodies.', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{32}$' } },
  RateLimit: { description: 'IETF draft RateLimit header: the policy, the requests left (`r`) and the seconds until the window resets (`t`).', schema: { type: 'string', example: '"default";r=99;t=60' } },
  'RateLimit-Policy': { description: 'IETF draft RateLimit-Policy header: the quota (`q`) per window of `w` seconds.', schema: { type: 'string', example: '"default";q=100;w=60' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string', pattern: '^\\d+$' } },
  Deprecation: { description: 'RFC 9745: when the deprecated element this call used was announced (`@` + Unix time; the earliest, if it used several). Only on answers to calls that used a deprecated element: the operation, a query parameter or body field sent, or a response field answered.', schema: { type: 'string', pattern: '^@\\d+$' } },
  Sunset: { description: 'RFC 8594: when the deprecated element this call used stops working (HTTP date; the earliest, if several; never before Deprecation). Only with Deprecation.', schema: { type: 'string' } },
  Link: { description: 'The deprecation notice of each deprecated element used (`<url>; rel="deprecation"; type="text/html"`). Only with Deprecation.', schema: { type: 'string' } },
  'Deprecated-Fields': { description: 'The deprecated response fields this answer contains, comma-separated, as the registry names them after `body.` (`trackingNumber`, `items[].sku`). A field in a brownout or past its sunset is left out of the answer instead, and not named.', schema: { type: 'string' } },
  'WWW-Authenticate': { description: 'The scheme to authenticate with: `Bearer`.', schema: { type: 'string' } },
  Allow: { description: 'The methods the path answers to.', schema: { type: 'string' } },
};
type HeaderName = keyof typeof headers;

/** Headers of the success responses that name what was written; always sent where listed. */
const successHeaders = {
  ETag: { description: 'The version of the representation; send it back in If-Match to change it safely.', required: true, schema: { type: 'string', pattern: '^"\\d+"$' } },
  Location: { description: 'Where the created or accepted resource lives.', required: true, schema: { type: 'string', format: 'uri-reference' } },
};

/** Every response carries these. RateLimit headers come once the request reached the limiter. */
const commonHeaders: HeaderName[] = ['X-Request-Id', 'RateLimit', 'RateLimit-Policy', 'Deprecation', 'Sunset', 'Link', 'Deprecated-Fields'];
const headerRefs = (names: HeaderName[]) => Object.fromEntries(names.map((name) => [name, ref('headers', name)]));

// The error responses, one per status, each in the one error format (or RFC 9457 on request).
const errorResponses: Record<string, { description: string; headers?: HeaderName[] }> = {
  BadRequest: { description: 'Unreadable request: malformed JSON or path, missing or wrongly typed field, unknown field or parameter, bad cursor' },
  Unauthenticated: { description: 'Missing, invalid, expired or revoked bearer token, or wrong credentials', headers: ['WWW-Authenticate'] },
  Forbidden: { description: 'Signed in, but not allowed to do this' },
  NotFound: { description: 'Absent, or not yours to see' },
  MethodNotAllowed: { description: 'The path does not answer to this method', headers: ['Allow'] },
  NotAcceptable: { description: 'The Accept header allows no JSON' },
  RequestTimeout: { description: 'The request body did not arrive in time' },
  Conflict: { description: 'The request conflicts with the current state' },
  Gone: { description: 'A deprecated element used during a brownout of it, or after its sunset (contracts/deprecations.yaml); the message names the replacement', headers: [] },
  PreconditionFailed: { description: 'If-Match names another version: read the resource again' },
  PayloadTooLarge: { description: 'The body is larger than 1 MiB' },
  UnsupportedMediaType: { description: 'The body is not JSON, or has a content coding' },
  UnprocessableContent: { description: 'Well-formed, but breaks a rule (a value out of range, a reused Idempotency-Key)' },
  TooManyRequests: { description: 'Too many requests; see Retry-After and RateLimit', headers: ['Retry-After'] },
  BadGateway: { description: 'The service behind the gateway failed' },
  ServiceUnavailable: { description: 'The service behind the gateway is unavailable or overloaded; see Retry-After', headers: ['Retry-After'] },
  GatewayTimeout: { description: 'The service behind the gateway did not answer in time' },
  Error: { description: 'Any other error, in the same format' },
};
type ErrorResponseName = keyof typeof errorResponses;

const errorResponseOf: Record<number, ErrorResponseName> = {
  400: 'BadRequest',
  401: 'Unauthenticated',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  408: 'RequestTimeout',
  409: 'Conflict',
  410: 'Gone',
  412: 'PreconditionFailed',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
  422: 'UnprocessableContent',
  429: 'TooManyRequests',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

function errorResponse(name: ErrorResponseName, codes?: ErrorCode[]) {
  const { description, headers: extra = [] } = errorResponses[name];
  const status = Object.entries(errorResponseOf).find(([, response]) => response === name)?.[0];
  const listed = codes ?? (Object.keys(errorCatalog) as ErrorCode[]).filter((code) => String(errorCatalog[code].status) === status);
  return {
    description: listed.length ? `${description}. \`code\`: ${listed.join(', ')}.` : `${description}.`,
    headers: headerRefs([...commonHeaders, ...extra]),
    content: { 'application/json': { schema: ref('schemas', 'Error') }, 'application/problem+json': { schema: ref('schemas', 'Problem') } },
  };
}

/** The statuses an operation can answer, from what it does: token, body, path ids, If-Match, upstream. */
function errorStatusesOf(route: RouteDefinition, path: string, operation: Operation, deprecated: boolean): number[] {
  const statuses = new Set<number>([400, 406, 429]);
  // A deprecated element of the operation answers 410 during a brownout and after its sunset.
  if (deprecated) statuses.add(410);
  if (route.auth !== 'public' || route.policy === 'sign-in') statuses.add(401);
  // An issued API key without the scope the route needs (or any key, on key management) is 403.
  if (operation.forbidden || route.auth !== 'public') statuses.add(403);
  if (path.includes('{')) statuses.add(404);
  if (operation.body) [408, 413, 415, 422].forEach((status) => statuses.add(status));
  if (operation.query && 'size' in operation.query.shape) statuses.add(422);
  if (operation.conflicts?.length) statuses.add(409);
  if (operation.ifMatch) statuses.add(412);
  if (operation.queriesOnly) statuses.add(405);
  if (route.upstream !== 'openapi') [502, 503, 504].forEach((status) => statuses.add(status));
  return [...statuses].sort((a, b) => a - b);
}

function queryParameters(query: z.ZodObject, sortFields?: readonly string[]): Record<string, unknown>[] {
  const shape = requestSchema(query) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(shape.properties ?? {}).map(([name, schema]) => {
    // A comma-separated list (`status=PENDING,CANCELED`) is an array in form style, not exploded.
    const list = query.shape[name] && (z.globalRegistry.get(unwrapOptional(query.shape[name] as Schema)) as { queryList?: readonly string[] } | undefined)?.queryList;
    if (list) {
      const { queryList: _values, type: _type, ...rest } = schema;
      return { name, in: 'query', required: shape.required?.includes(name) ?? false, style: 'form', explode: false, schema: { ...rest, type: 'array', items: { type: 'string', enum: [...list] }, minItems: 1 } };
    }
    if (name === 'sort' && sortFields) {
      const fields = sortFields.join('|');
      const direction = '[aA][sS][cC]|[dD][eE][sS][cC]';
      return {
        name,
        in: 'query',
        required: false,
        description: `\`field\`, \`field,asc\`, \`field,desc\` or \`-field\` (descending); fields: ${sortFields.join(', ')}.`,
        schema: { type: 'string', pattern: `^(?:-?(?:${fields})|(?:${fields}),(?:${direction}))$`, example: `${sortFields[0]},desc` },
      };
    }
    return { name, in: 'query', required: shape.required?.includes(name) ?? false, ...(typeof schema.description === 'string' ? { description: schema.description } : {}), schema };
  });
}

function unwrapOptional(schema: Schema): Schema {
  return schema instanceof z.ZodOptional ? unwrapOptional(schema.unwrap() as Schema) : schema;
}

function responseNameOf(operation: Operation, status: number): string {
  if (status === 409) return `Conflict${operation.operationId[0].toUpperCase()}${operation.operationId.slice(1)}`;
  if (status === 400 && operation.graphqlErrors) return 'GraphQLBadRequest';
  return errorResponseOf[status];
}

/** What GraphQL over HTTP answers in: the client's Accept chooses (graphql-response+json makes refusals 4xx). */
const graphqlMediaTypes = ['application/json', 'application/graphql-response+json'];

/** POST /graphql's 400: the gateway's own refusals in the error format, GraphQL's in its format. */
function graphqlBadRequest() {
  const response = errorResponse('BadRequest');
  return {
    ...response,
    description: `${errorResponses.BadRequest.description}; a GraphQL document that cannot run (syntax, validation, depth or cost) answers in GraphQL's format, \`errors[].extensions.code\` saying why (as application/graphql-response+json when the client accepts it).`,
    content: {
      ...response.content,
      'application/json': { schema: { anyOf: [ref('schemas', 'Error'), ref('schemas', 'GraphQLResponse')] } },
      'application/graphql-response+json': { schema: ref('schemas', 'GraphQLResponse') },
    },
  };
}

/** The routes a document describes and what each operation takes and answers; tests give their own. */
export interface ApiSurface {
  routes: RouteDefinition[];
  operations: Record<string, Operation>;
}

/**
 * `registryFile`: contracts/deprecations.yaml, whose REST elements the document marks deprecated.
 * One document for every major version: v1's operations under the server `/v1`; a route declared
 * for a later major at its full path (`/v2/products/{id}`), its path item naming the server `/`
 * (OpenAPI's path-level servers), which is how the contract gate tells a new major from a change
 * to v1 (tools/contracts/openapi-diff.ts). A later major serves every operation it does not list
 * as the earlier one does.
 */
export function buildDocument(registryFile?: string, surface: ApiSurface = { routes: routeTable, operations }): Record<string, unknown> {
  const deprecations = registryFile ? loadDeprecations(registryFile) : [];
  const deprecatedOperations = new Set(deprecations.map((entry) => /^rest:([A-Z]+ \S+)/.exec(entry.element)?.[1]).filter(Boolean));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of surface.routes) {
    const path = route.pattern.replace(/:([A-Za-z]+)/g, '{$1}');
    const major = route.version ?? 'v1';
    const documented = major === 'v1' ? path : `/${major}${path}`;
    for (const method of route.methods) {
      const key = `${method} ${documented}`;
      const operation = surface.operations[key];
      if (!operation) throw new Error(`No OpenAPI description for ${key}: add it to tools/openapi/document.ts`);
      const parameters: Record<string, unknown>[] = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
        name,
        in: 'path',
        required: true,
        ...(path.startsWith('/users/') && name === 'id' ? { description: 'A user id, or `me` for the caller.' } : {}),
        schema: path.startsWith('/users/') && name === 'id' ? { type: 'string' } : name === 'sku' ? { type: 'string', minLength: 1, maxLength: 64 } : { type: 'string', format: 'uuid' },
      }));
      if (operation.query) parameters.push(...queryParameters(operation.query, operation.sortFields));
      // Every representation-returning operation takes `fields` (the gateway's: usage/recording.ts).
      if (operation.success[2] && !['graphql', 'openapi', 'usage'].includes(route.upstream)) parameters.push(ref('parameters', 'fields'));
      if (operation.idempotencyKey) parameters.push(ref('parameters', 'Idempotency-Key'));
      if (operation.ifMatch) parameters.push(ref('parameters', 'If-Match'));
      parameters.push(ref('parameters', 'traceparent'));
      const [status, description, schemaName] = operation.success;
      const success: Record<string, unknown> = { description, headers: headerRefs(commonHeaders) };
      if (schemaName) success.content = Object.fromEntries((operation.graphqlErrors ? graphqlMediaTypes : ['application/json']).map((type) => [type, { schema: ref('schemas', schemaName) }]));
      for (const name of operation.headers ?? []) (success.headers as Record<string, unknown>)[name] = successHeaders[name];
      paths[documented] ??= major === 'v1' ? {} : { servers: [{ url: '/', description: `This gateway, API version ${major}` }] };
      paths[documented][method.toLowerCase()] = {
        operationId: operation.operationId,
        summary: operation.summary,
        tags: [route.upstream],
        ...(route.auth === 'public' ? { security: [] } : {}),
        parameters,
        // The services read a missing body as {} (parseBody), so a body whose every field is
        // optional may be left out, and the document must say so or generated clients send {}.
        // GraphQL over HTTP is not parsed that way: a POST must carry its request (bodyRequired).
        ...(operation.body ? { requestBody: { required: operation.bodyRequired ?? !operation.body.safeParse({}).success, content: { 'application/json': { schema: requestSchema(operation.body) } } } } : {}),
        responses: {
          [String(status)]: success,
          ...(operation.created ? { '201': { ...success, description: operation.created, headers: { ...(success.headers as Record<string, unknown>), Location: successHeaders.Location } } } : {}),
          ...Object.fromEntries(errorStatusesOf(route, path, operation, deprecatedOperations.has(`${method} /${major}${path}`)).map((code) => [String(code), ref('responses', responseNameOf(operation, code))])),
          default: ref('responses', 'Error'),
        },
      };
    }
  }
  const conflictResponses = Object.fromEntries(
    Object.values(surface.operations)
      .filter((operation) => operation.conflicts?.length)
      .map((operation) => [`Conflict${operation.operationId[0].toUpperCase()}${operation.operationId.slice(1)}`, errorResponse('Conflict', operation.conflicts)]),
  );
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'Order and user API',
      version: '1.0.0',
      description: 'Users, orders, products, shipments, ratings and reviews. One error format everywhere; cursor-paged lists; ids are strings; money is an integer in the smallest currency unit.',
      contact: { name: 'API team', url: 'https://docs.example.com/api', email: 'api@example.com' },
      license: { name: 'Proprietary', url: 'https://docs.example.com/terms' },
      'x-api-id': 'c6e8d0f0-0c0e-4d0e-9f0b-6b7b5d5f9a01',
      'x-audience': 'external-public',
    },
    servers: [{ url: '/v1', description: 'This gateway' }],
    security: [{ bearer: [] }, { apiKey: [] }],
    tags: [
      { name: 'users', description: 'Users, sign-up and tokens; webhook endpoints, their deliveries and the event log' },
      { name: 'orders', description: 'Orders, items, shipments and cancellations' },
      { name: 'catalog', description: 'Products, ratings and reviews' },
      { name: 'inventory', description: 'Stock levels: what is on hand, reserved and available per SKU' },
      { name: 'graphql', description: 'The federated query interface' },
      { name: 'usage', description: 'Deprecated elements and who still uses them' },
      { name: 'openapi', description: 'This document' },
      { name: 'webhooks', description: 'Events we POST to the URLs you register (Standard Webhooks signatures)' },
    ],
    paths,
    webhooks: webhookOperations(),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /tokens, or an issued API key (`opk_…`) as the bearer value.' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'An issued API key (`opk_…`, POST /api-keys), narrowed by its scopes.' },
      },
      schemas: { ...componentSchemas(), ...eventComponents() },
      responses: {
        ...Object.fromEntries((Object.keys(errorResponses) as ErrorResponseName[]).filter((name) => name !== 'Conflict').map((name) => [name, errorResponse(name, name === 'Error' ? (Object.keys(errorCatalog) as ErrorCode[]) : undefined)])),
        ...conflictResponses,
        GraphQLBadRequest: graphqlBadRequest(),
      },
      headers,
      parameters: {
        'Idempotency-Key': {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Makes a retry safe: the same key and body within 24 h replays the first response; the same key with another body is a 422.',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
        },
        'If-Match': {
          name: 'If-Match',
          in: 'header',
          required: false,
          description: 'The ETag last read; the write happens only if the resource is still at that version (else 412).',
          schema: { type: 'string', example: '"3"' },
        },
        fields: {
          name: 'fields',
          in: 'query',
          required: false,
          description:
            'The top-level fields the client reads (of each item, for a list), comma-separated. The answer stays whole; the gateway records that this client uses only these fields, so it is not counted as a user of the others when they are deprecated. Without it, every field of the answer counts as used. An unknown name is 400 VALIDATION_FAILED.',
          style: 'form',
          explode: false,
          schema: { type: 'array', items: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9]*$' }, minItems: 1 },
        },
        traceparent: {
          name: 'traceparent',
          in: 'header',
          required: false,
          description: 'W3C Trace Context: continues the caller\'s trace; its trace id becomes X-Request-Id.',
          schema: { type: 'string', pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$' },
        },
      },
    },
  };
  // An entry naming what this document no longer has (the last step of a replacement) marks nothing; the contract gate checks the names.
  markDeprecations(document, deprecations);
  // 410 GONE is answered only by what the registry deprecates: with nothing deprecated, nothing
  // refers to it, and an unused component is a lint error (Spectral, Redocly).
  if (!JSON.stringify(document.paths).includes('"#/components/responses/Gone"')) delete (document.components as { responses: Record<string, unknown> }).responses.Gone;
  return document;
}
