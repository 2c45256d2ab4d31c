// The OpenAPI 3.1 document of the public API. The operations come from the endpoint declarations
// beside their handlers (libs/endpoints; every app's endpoints.ts lists them, ./endpoints.ts
// gathers them) and the representations they answer, named where they are defined
// (`component(...)`); this file keeps what belongs to the document as a whole: its info, tags,
// security schemes, the headers and error responses every operation shares, and the webhooks.
// tools/openapi/generate.mjs bundles and runs this file.
import { z } from 'zod';
import { scopeFor } from '@platform/auth';
import { component, type Endpoint, namedComponents, pathParameterNames, type SuccessHeader } from '@platform/endpoints';
import { errorBodySchema, errorCatalog, problemBodySchema, type ErrorCode } from '@platform/errors';
import { SORT_FIELDS_EXTENSION, sortPattern } from '@platform/paging';
import { CHECKS_EXTENSION, unstatedChecksOf } from '@platform/validation';
import { eventCatalog, eventJsonSchemas, type EventType, eventTypes } from '@platform/events';
import { loadDeprecations } from '@platform/deprecations';
import { markDeprecations } from './deprecation-marks';
import { apiEndpoints } from './endpoints';

export { serviceRoutesModule } from './endpoints';
// Apps have no import path (nothing may import an app); the generator alone reads them.
/* eslint-disable @nx/enforce-module-boundaries */
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../apps/users-service/src/webhooks/retry-schedule';
/* eslint-enable @nx/enforce-module-boundaries */

type Schema = z.ZodType;

// The error bodies every operation may answer, named like the representations.
component('Error', errorBodySchema);
component('Problem', problemBodySchema);

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
  // A receiver's reading of a payload cannot be recorded, so a deprecation is told in the delivery (users-service payload-deprecations.ts).
  { name: 'Deprecation', in: 'header', required: false, description: 'RFC 9745: when a deprecated element this delivery carries was announced (`@` + Unix time; the earliest, if several): the event type, or a payload field it contains (marked `deprecated` in the schema). Only on such deliveries. A deprecated field is left out of the payload during a brownout of it and from its sunset day on.', schema: { type: 'string', pattern: '^@\\d+$' } },
  { name: 'Sunset', in: 'header', required: false, description: 'RFC 8594: when the deprecated element this delivery carries stops being sent (HTTP date; the earliest, if several). Only with Deprecation.', schema: { type: 'string' } },
  { name: 'Link', in: 'header', required: false, description: 'The deprecation notice of each deprecated element carried (`<url>; rel="deprecation"; type="text/html"`). Only with Deprecation.', schema: { type: 'string' } },
];

/** Which endpoints get an event type's deliveries: a type no endpoint with scope OWN ever receives says so, and why. */
function audienceOf(type: EventType): string {
  const reason: string | undefined = eventCatalog[type].allScopeOnly;
  return reason ? `Sent only to enabled endpoints with scope ALL (admins) subscribed to ${type}: ${reason}.` : `Sent to every enabled endpoint subscribed to ${type} (yours only, or every one with scope ALL).`;
}

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
          description: `${audienceOf(type)} A 2xx within 15 s acknowledges it; anything else (3xx included: redirects are not followed) is retried ${MAX_ATTEMPTS - 1} times after ${schedule}. An endpoint failing for 5 days is disabled.`,
          tags: ['webhooks'],
          // The catalog's version of the data's schema (the `dataschema` URN ends in it); the
          // contract gate names it when a payload change breaks receivers.
          'x-event-version': eventCatalog[type].version,
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
        // What a request must also satisfy that JSON Schema cannot say (refine, superRefine).
        const checks = unstatedChecksOf(context.zodSchema);
        if (checks.length > 0) json[CHECKS_EXTENSION] = checks;
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
  for (const [id, schema] of namedComponents()) registry.add(schema, { id });
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
  Gone: { description: 'A deprecated element used during a brownout of it, or from its sunset day on (contracts/deprecations.yaml); the message names the replacement', headers: [] },
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
function errorStatusesOf(endpoint: Endpoint, path: string, deprecated: boolean): number[] {
  const statuses = new Set<number>([400, 406, 429]);
  // A deprecated element of the operation answers 410 during a brownout and from its sunset day on.
  if (deprecated) statuses.add(410);
  if (endpoint.access !== 'public' || endpoint.policy === 'sign-in') statuses.add(401);
  // An issued API key without the scope the route needs (or any key, on key management) is 403.
  if (endpoint.forbidden || endpoint.access !== 'public') statuses.add(403);
  if (path.includes('{')) statuses.add(404);
  if (endpoint.body) [408, 413, 415, 422].forEach((status) => statuses.add(status));
  // A query parameter's value can break a rule (a size out of range, a value not in its list); an
  // unknown one is a 400. GraphQL's parameters are checked by GraphQL, which answers in its own way.
  if (endpoint.query && !endpoint.graphqlErrors && Object.keys(endpoint.query.shape).length > 0) statuses.add(422);
  if (endpoint.conflicts?.length) statuses.add(409);
  if (endpoint.ifMatch) statuses.add(412);
  if (endpoint.queriesOnly) statuses.add(405);
  if (endpoint.upstream !== 'openapi') [502, 503, 504].forEach((status) => statuses.add(status));
  return [...statuses].sort((a, b) => a - b);
}

/**
 * Who may call an operation, in OpenAPI's terms: `security` lists the credentials that work (none
 * for a public one; a token; an API key, with the scope the gateway checks in `x-api-key-scopes`,
 * apps/gateway/src/auth api-keys.ts), and `x-access` says what a security requirement cannot: `admin` (an
 * administrator's credential, anyone else 403). The contract gate compares both.
 */
function accessOf(endpoint: Endpoint): Record<string, unknown> {
  if (endpoint.access === 'public') return { security: [], 'x-access': 'public' };
  // GraphQL takes a key and checks its scopes per root field (graphqlRootResources).
  if (endpoint.upstream === 'graphql') return { security: [{ bearer: [] }, { apiKey: [] }], 'x-access': endpoint.access };
  // A route without a resource (or key management, `api-keys`) refuses every API key.
  const keyScope = endpoint.scope && endpoint.scope !== 'api-keys' ? scopeFor(endpoint.scope, endpoint.method !== 'GET' && !endpoint.readsOnly) : undefined;
  // The key's scope goes in `x-api-key-scopes`: OpenAPI lists scopes in a requirement for OAuth2
  // and OpenID schemes, and linters (Spectral's oas3-operation-security-defined) hold an apiKey
  // scheme's list to that, so the requirement itself names none.
  return { security: keyScope ? [{ bearer: [] }, { apiKey: [] }] : [{ bearer: [] }], 'x-access': endpoint.access, ...(keyScope ? { 'x-api-key-scopes': [keyScope] } : {}) };
}

/** Each path parameter as its endpoint declares it (defineEndpoints saw that every one is declared); its description said once, on the parameter. */
function pathParameters(endpoint: Endpoint): Record<string, unknown>[] {
  return pathParameterNames(endpoint.path).map((name) => {
    const { description, ...schema } = requestSchema(endpoint.params![name].rule);
    return { name, in: 'path', required: true, ...(typeof description === 'string' ? { description } : {}), schema };
  });
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
      return {
        name,
        in: 'query',
        required: false,
        description: `\`field\`, \`field,asc\`, \`field,desc\` or \`-field\` (descending); fields: ${sortFields.join(', ')}.`,
        schema: { type: 'string', pattern: sortPattern(sortFields), [SORT_FIELDS_EXTENSION]: [...sortFields], example: `${sortFields[0]},desc` },
      };
    }
    return { name, in: 'query', required: shape.required?.includes(name) ?? false, ...(typeof schema.description === 'string' ? { description: schema.description } : {}), schema };
  });
}

function unwrapOptional(schema: Schema): Schema {
  return schema instanceof z.ZodOptional ? unwrapOptional(schema.unwrap() as Schema) : schema;
}

const conflictResponseName = (endpoint: Endpoint) => `Conflict${endpoint.operationId[0].toUpperCase()}${endpoint.operationId.slice(1)}`;

function responseNameOf(endpoint: Endpoint, status: number): string {
  if (status === 409) return conflictResponseName(endpoint);
  if (status === 400 && endpoint.graphqlErrors) return 'GraphQLBadRequest';
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

/** The name a representation is published under: given where it is defined, with `component()`. */
function componentOf(endpoint: Endpoint, schema: Schema): string {
  const name = namedComponents().find(([, named]) => named === schema)?.[0];
  if (!name) throw new Error(`${endpoint.operationId} answers a schema with no component name: name it where it is defined, with component() from @platform/endpoints`);
  return name;
}

/**
 * `registryFile`: contracts/deprecations.yaml, whose REST elements the document marks deprecated.
 * `endpoints`: every endpoint the gateway serves (tests add their own, a /v2 one among them).
 * One document for every major version: v1's operations under the server `/v1`; an endpoint
 * declared for a later major at its full path (`/v2/products/{id}`), its path item naming the
 * server `/` (OpenAPI's path-level servers), which is how the contract gate tells a new major from
 * a change to v1 (tools/contracts/openapi-diff.ts). A later major serves every operation it does
 * not list as the earlier one does.
 */
export function buildDocument(registryFile?: string, endpoints: readonly Endpoint[] = apiEndpoints): Record<string, unknown> {
  const deprecations = registryFile ? loadDeprecations(registryFile) : [];
  const deprecatedOperations = new Set(deprecations.map((entry) => /^rest:([A-Z]+ \S+)/.exec(entry.element)?.[1]).filter(Boolean));
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints) {
    const { method } = endpoint;
    const path = endpoint.path.replace(/:([A-Za-z]\w*)/g, '{$1}');
    const major = endpoint.version ?? 'v1';
    const documented = major === 'v1' ? path : `/${major}${path}`;
    if (paths[documented]?.[method.toLowerCase()]) throw new Error(`${method} ${documented} is declared twice`);
    const parameters = pathParameters(endpoint);
    if (endpoint.query) parameters.push(...queryParameters(endpoint.query, endpoint.sortFields));
    const answers = Object.entries(endpoint.responses).map(([status, response]) => [Number(status), response!] as const);
    // Every representation-returning operation takes `fields` (the gateway's: usage/recording.ts).
    if (answers.some(([, response]) => response.body) && !['graphql', 'openapi', 'usage'].includes(endpoint.upstream)) parameters.push(ref('parameters', 'fields'));
    if (endpoint.idempotencyKey) parameters.push(ref('parameters', 'Idempotency-Key'));
    if (endpoint.ifMatch) parameters.push(ref('parameters', 'If-Match'));
    parameters.push(ref('parameters', 'traceparent'));
    const successes = Object.fromEntries(
      answers.map(([status, response]) => {
        const success: Record<string, unknown> = { description: response.description, headers: headerRefs(commonHeaders) };
        if (response.body) success.content = Object.fromEntries((endpoint.graphqlErrors ? graphqlMediaTypes : ['application/json']).map((type) => [type, { schema: ref('schemas', componentOf(endpoint, response.body!)) }]));
        for (const name of response.headers ?? ([] as SuccessHeader[])) (success.headers as Record<string, unknown>)[name] = successHeaders[name];
        return [String(status), success];
      }),
    );
    paths[documented] ??= major === 'v1' ? {} : { servers: [{ url: '/', description: `This gateway, API version ${major}` }] };
    paths[documented][method.toLowerCase()] = {
      operationId: endpoint.operationId,
      summary: endpoint.summary,
      tags: [endpoint.upstream],
      ...accessOf(endpoint),
      parameters,
      // The services read a missing body as {} (parseBody), so a body whose every field is
      // optional may be left out, and the document must say so or generated clients send {}.
      // GraphQL over HTTP is not parsed that way: a POST must carry its request (bodyRequired).
      ...(endpoint.body ? { requestBody: { required: endpoint.bodyRequired ?? !endpoint.body.safeParse({}).success, content: { 'application/json': { schema: requestSchema(endpoint.body) } } } } : {}),
      responses: {
        ...successes,
        ...Object.fromEntries(errorStatusesOf(endpoint, path, deprecatedOperations.has(`${method} /${major}${path}`)).map((code) => [String(code), ref('responses', responseNameOf(endpoint, code))])),
        default: ref('responses', 'Error'),
      },
    };
  }
  const conflictResponses = Object.fromEntries(endpoints.filter((endpoint) => endpoint.conflicts?.length).map((endpoint) => [conflictResponseName(endpoint), errorResponse('Conflict', endpoint.conflicts)]));
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
