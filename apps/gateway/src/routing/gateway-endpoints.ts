// The endpoints the gateway answers itself (GraphQL, the deprecation reports, the documents),
// declared as the services declare theirs (libs/endpoints): the route table and the OpenAPI
// document are derived from these, as from the services' declarations.
import { component, defineEndpoints } from '@platform/endpoints';
import { graphqlErrorCatalog } from '@platform/errors';
import { listEnvelopeSchema } from '@platform/paging';
import { z } from '@platform/validation';
import { deprecationUsageRepresentation } from '../usage/representation';

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
const graphqlResponse = component(
  'GraphQLResponse',
  z.object({
    data: z.record(z.string(), z.unknown()).nullable().optional(),
    extensions: z
      .object({ cost: z.object({ requested: z.number().int().min(0), limit: z.number().int().min(1) }).optional() })
      .optional()
      .meta({ description: '`cost`: what the operation cost and the limit (a scalar field 1, an object 2 plus its fields, a list its selection times first).' }),
    errors: z
      .array(
        z.looseObject({
          message: z.string(),
          path: z.array(z.union([z.string(), z.number().int()])).optional(),
          extensions: z
            .looseObject({
              // The GraphQL-only codes, from their catalog (libs/errors): the SDK's graphqlErrorCodes is generated from this list.
              code: z.string().meta({
                description: 'Stable; clients branch on it. A code of the REST error format (Error.code) when REST would refuse the same thing, else one of GraphQL\'s own listed here; a `*_LIMIT_EXCEEDED` code names its limit in an extension beside it (`cost`, `depth`, `aliases`, `directives`, `tokens`, `nameLength`, `mutationFields`). Unknown codes get default handling.',
                examples: Object.keys(graphqlErrorCatalog),
              }),
            })
            .optional(),
        }),
      )
      .optional()
      .meta({ description: '`extensions.code` carries the codes of the REST error format, and GraphQL\'s own (parsing, validation, the limits, trusted documents).' }),
  }),
);
const openApiSection = z.record(z.string(), z.unknown());
const openapiDocument = component(
  'OpenApiDocument',
  z.object({
    openapi: z.string(),
    info: openApiSection,
    servers: z.array(openApiSection),
    security: z.array(openApiSection),
    tags: z.array(openApiSection),
    paths: openApiSection,
    webhooks: openApiSection,
    components: openApiSection,
  }),
);
const eventSchemasDocument = component('EventSchemasDocument', z.object({ $schema: z.string(), $id: z.string(), title: z.string(), description: z.string(), $defs: z.record(z.string(), z.record(z.string(), z.unknown())) }));
const deprecationUsagePage = component('DeprecationUsagePage', listEnvelopeSchema(deprecationUsageRepresentation));

const graphqlSummary = 'with Accept: application/json errors come with HTTP 200';

export const graphqlEndpoints = defineEndpoints('graphql', {
  // GET for queries (a mutation over GET is 405), POST for both: the GraphQL-over-HTTP specification.
  queryGraphqlOverGet: {
    method: 'GET', path: '/graphql', summary: `Run a GraphQL query given as parameters (a mutation over GET is 405); ${graphqlSummary}`, access: 'signed-in', policy: 'graphql',
    query: graphqlQueryParameters, graphqlErrors: true, queriesOnly: true,
    responses: { 200: { description: 'GraphQL response with data and/or errors', body: graphqlResponse } },
  },
  queryGraphql: {
    method: 'POST', path: '/graphql', summary: `Run a GraphQL query or mutation (federated); ${graphqlSummary}`, access: 'signed-in', policy: 'graphql',
    body: graphqlRequest, bodyRequired: true, graphqlErrors: true,
    responses: { 200: { description: 'GraphQL response with data and/or errors', body: graphqlResponse } },
  },
});

export const usageEndpoints = defineEndpoints('usage', {
  listDeprecations: {
    method: 'GET', path: '/deprecations', summary: 'Every deprecated element with its dates and who still uses it (admin)', access: 'admin',
    responses: { 200: { description: 'The deprecation registry with callers and calls in the last 1, 7 and 30 days', body: deprecationUsagePage } },
  },
  listMyDeprecations: {
    method: 'GET', path: '/me/deprecations', summary: 'The deprecated elements the caller, or an API key of theirs, used in the last 30 days', access: 'signed-in',
    responses: { 200: { description: 'The deprecated elements the caller used', body: deprecationUsagePage } },
  },
});

export const documentEndpoints = defineEndpoints('openapi', {
  getOpenApiDocument: {
    method: 'GET', path: '/openapi.json', summary: 'This document (public)', access: 'public', cacheable: true,
    responses: { 200: { description: 'OpenAPI 3.1 document', body: openapiDocument } },
  },
  getEventSchemas: {
    method: 'GET', path: '/event-schemas', summary: "The JSON Schema (2020-12) of every domain event's data, by event type (public)", access: 'public', cacheable: true,
    responses: { 200: { description: 'JSON Schema document', body: eventSchemasDocument } },
  },
});

export const gatewayEndpoints = [...graphqlEndpoints.endpoints, ...usageEndpoints.endpoints, ...documentEndpoints.endpoints];
