// What each REST request uses of the contract, recorded per caller (usage store, libs/usage): the
// operation, each query parameter and each request body field (nested paths as
// `request.body.items[].quantity`), each header parameter it sends (`header.Idempotency-Key`),
// and the response fields the caller reads. A caller names the top-level fields it reads with
// `fields=a,b` (the answer stays whole, as the spec sends every field); without it the whole
// answer counts as read, recorded as `response.<status>` beside its top-level fields. The gate
// and the reports count use of a field as use of everything under it (mayHaveUsed,
// libs/deprecations): conservative, so that a removal is never judged safe on a guess. Only
// elements the OpenAPI document declares are recorded, so no request can fill the store with
// names of its own.
import type { RequestHandler, Request } from 'express';
import { ApiError } from '@platform/errors';
import type { SelectedElements } from '@platform/graphql-gateway';
import type { UsageRecorder } from '@platform/usage';
import { callerIdentityOf } from '../callers/caller-identity';
import type { CompiledRoute } from '../routing/router';
import { forwardedJson } from '../request-state';

export const FIELDS_PARAMETER = 'fields';
/** Body paths followed this deep; the request schemas are shallower. */
const MAX_DEPTH = 6;

type JsonSchema = { $ref?: string; type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; anyOf?: JsonSchema[]; oneOf?: JsonSchema[]; allOf?: JsonSchema[] };
interface OpenApiOperation {
  parameters?: ({ name?: string; in?: string } | { $ref: string })[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> } | { $ref: string }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema>; parameters?: Record<string, { name?: string; in?: string }> };
}

/** What one operation can record, from its OpenAPI description. */
export interface OperationUsage {
  /** `rest:GET /v1/orders/{id}`. */
  element: string;
  queryParameters: Set<string>;
  /** Header parameters: the lower-case name (as Node gives request headers) → the declared name. */
  headerParameters: Map<string, string>;
  /** Every status the operation declares an answer for. */
  statuses: Set<number>;
  /** Body paths the request schema declares (`items[].quantity`). */
  bodyPaths: Set<string>;
  /** Success status → the top-level response field names (`fields` takes them) and their element prefix. */
  responses: Map<number, { names: string[]; prefix: string; envelope: string[] }>;
}

function resolve(schema: JsonSchema | undefined, document: OpenApiDocument, depth = 0): JsonSchema | undefined {
  if (!schema || depth > 10) return undefined;
  if (schema.$ref) return resolve(document.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')], document, depth + 1);
  const branches = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])];
  if (branches.length === 0) return schema;
  // A nullable or a union: the fields of every branch.
  const merged: JsonSchema = { properties: { ...schema.properties } };
  for (const branch of branches) {
    const resolved = resolve(branch, document, depth + 1);
    if (resolved?.properties) Object.assign(merged.properties as object, resolved.properties);
    if (resolved?.items) merged.items = resolved.items;
  }
  return merged;
}

/** Every path into a body the schema declares: `a`, `a.b`, `items[]`, `items[].quantity`. */
function schemaPaths(schema: JsonSchema | undefined, document: OpenApiDocument, prefix: string, into: Set<string>, depth = 0): void {
  const resolved = resolve(schema, document);
  if (!resolved || depth > MAX_DEPTH) return;
  for (const [name, property] of Object.entries(resolved.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    into.add(path);
    const inner = resolve(property, document);
    if (inner?.items) {
      into.add(`${path}[]`);
      schemaPaths(inner.items, document, `${path}[]`, into, depth + 1);
    } else schemaPaths(inner, document, path, into, depth + 1);
  }
}

/** Each operation's recordable elements, by `METHOD /pattern` as the route table writes it (`GET /orders/:id`). */
export function operationUsageOf(document: OpenApiDocument): Map<string, OperationUsage> {
  const operations = new Map<string, OperationUsage>();
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const verb = method.toUpperCase();
      // A later major's operations are listed with their prefix (`/v2/products/{id}`); v1's under the server's `/v1`.
      const element = `rest:${verb} ${/^\/v\d+\//.test(path) ? path : `/v1${path}`}`;
      const queryParameters = new Set<string>();
      const headerParameters = new Map<string, string>();
      for (const declared of operation.parameters ?? []) {
        const parameter = '$ref' in declared ? document.components?.parameters?.[declared.$ref.replace('#/components/parameters/', '')] : declared;
        if (!parameter?.name) continue;
        if (parameter.in === 'query' && parameter.name !== FIELDS_PARAMETER) queryParameters.add(parameter.name);
        if (parameter.in === 'header') headerParameters.set(parameter.name.toLowerCase(), parameter.name);
      }
      const statuses = new Set(Object.keys(operation.responses ?? {}).filter((status) => /^\d{3}$/.test(status)).map(Number));
      const bodyPaths = new Set<string>();
      schemaPaths(operation.requestBody?.content?.['application/json']?.schema, document, '', bodyPaths);
      const responses = new Map<number, { names: string[]; prefix: string; envelope: string[] }>();
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (!/^2\d\d$/.test(status) || '$ref' in response) continue;
        const body = resolve(response.content?.['application/json']?.schema, document);
        if (!body?.properties) continue;
        // A list answers the paging envelope `{items: [...], hasNext, nextCursor}`: `fields` names the
        // fields of each item. (An order's own `items` is a field like any other.)
        const items = 'hasNext' in body.properties ? resolve(body.properties.items, document) : undefined;
        const item = items?.items ? resolve(items.items, document) : undefined;
        // The envelope's own fields (hasNext, nextCursor) are read whatever `fields` names.
        const envelope = item?.properties ? Object.keys(body.properties).filter((name) => name !== 'items').map((name) => `${element} response.${status}.body.${name}`) : [];
        if (item?.properties) responses.set(Number(status), { names: Object.keys(item.properties), prefix: `${element} response.${status}.body.items[].`, envelope });
        else responses.set(Number(status), { names: Object.keys(body.properties), prefix: `${element} response.${status}.body.`, envelope });
      }
      operations.set(`${verb} ${path.replace(/\{(\w+)\}/g, ':$1')}`, { element, queryParameters, headerParameters, statuses, bodyPaths, responses });
    }
  }
  return operations;
}

/** The body's paths the schema declares (`items[].quantity`), as elements. */
function bodyElements(body: unknown, operation: OperationUsage, prefix: string, into: string[], depth = 0): void {
  if (depth > MAX_DEPTH || body === null || typeof body !== 'object') return;
  if (Array.isArray(body)) {
    for (const item of body) bodyElements(item, operation, prefix, into, depth + 1);
    return;
  }
  for (const [name, value] of Object.entries(body)) {
    const path = prefix ? `${prefix}.${name}` : name;
    if (!operation.bodyPaths.has(path)) continue;
    into.push(`${operation.element} request.body.${path}`);
    if (Array.isArray(value)) {
      into.push(`${operation.element} request.body.${path}[]`);
      for (const item of value) bodyElements(item, operation, `${path}[]`, into, depth + 1);
    } else bodyElements(value, operation, path, into, depth + 1);
  }
}

/**
 * The query string without `fields`, whether one was there, and the names `fields` gave (several
 * `fields=` add up). An empty `fields=` names none, as any parameter sent empty is one not sent.
 */
function takeFields(search: string): { rest: string; taken: boolean; fields?: string[] } {
  let fields: string[] | undefined;
  let taken = false;
  const kept: string[] = [];
  for (const part of search.split('&')) {
    if (!part) continue;
    const name = part.split('=', 1)[0];
    let decoded = name;
    try {
      decoded = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      // A malformed name is the service's to refuse; it is forwarded as it came.
    }
    if (decoded !== FIELDS_PARAMETER) {
      kept.push(part);
      continue;
    }
    let value = part.slice(name.length + 1);
    try {
      value = decodeURIComponent(value.replace(/\+/g, ' '));
    } catch {
      throw new ApiError('VALIDATION_FAILED', 'The fields parameter has a malformed %-encoding.', { fieldErrors: [{ field: FIELDS_PARAMETER, code: 'INVALID_FORMAT', message: 'Malformed %-encoding.' }] });
    }
    taken = true;
    if (value === '') continue;
    fields = [...(fields ?? []), ...value.split(',').map((field) => field.trim())];
  }
  return { rest: kept.join('&'), taken, fields };
}

function queryNames(search: string, operation: OperationUsage): string[] {
  const names = new Set<string>();
  for (const part of search.split('&')) {
    // A parameter sent empty is one not sent (docs/api.md, Lists): no use of it.
    if (!part || part.endsWith('=') || !part.includes('=')) continue;
    let name = part.split('=', 1)[0];
    try {
      name = decodeURIComponent(name.replace(/\+/g, ' '));
    } catch {
      continue;
    }
    // `sku[]`-style repeats and unknown names: only what the operation declares is recorded.
    if (operation.queryParameters.has(name)) names.add(`${operation.element} query.${name}`);
  }
  return [...names];
}

/**
 * What a GraphQL operation used: every element it selects. A HEAD's answer has no body, so its
 * caller read no field: as recordRestUsage records a REST HEAD (its operation and what it sent,
 * never the answer's fields), it records the root fields (the operation's entry points, as a REST
 * route) and the arguments and enum values it sent, never the fields selected beneath, which
 * name what the answer holds as REST's `fields` does.
 */
export function graphqlUsageOf(req: Request, selection: SelectedElements): readonly string[] {
  if (req.method !== 'HEAD') return selection.elements;
  return selection.elements.filter((element) => selection.rootFields.has(element) || !selection.outputFields.has(element));
}

/**
 * The step before dispatch: checks and strips `fields` (400 VALIDATION_FAILED for a name the
 * answer does not have; services never see it), and once the answer is sent records what the
 * request used for its caller. Without a recorder (USAGE_RECORDING=off) `fields` is still checked
 * and stripped: a client's request means the same either way.
 */
export function recordRestUsage(recorder: UsageRecorder | undefined, operations: Map<string, OperationUsage>): RequestHandler {
  return (req, res, next) => {
    const route = res.locals.route as CompiledRoute;
    if (route.upstream === 'graphql' || route.upstream === 'openapi') return next(); // GraphQL records its own selection
    const operation = operations.get(`${req.method === 'HEAD' ? 'GET' : req.method} ${route.version === 'v1' ? '' : `/${route.version}`}${route.pattern}`);
    if (!operation) return next();
    const queryAt = req.originalUrl.indexOf('?');
    const search = queryAt >= 0 ? req.originalUrl.slice(queryAt + 1) : '';
    let fields: string[] | undefined;
    if (search.includes(FIELDS_PARAMETER)) {
      const taken = takeFields(search);
      fields = taken.fields;
      if (fields) {
        const known = new Set([...operation.responses.values()].flatMap((response) => response.names));
        const unknown = [...new Set(fields)].filter((name) => !known.has(name));
        if (unknown.length > 0) {
          const allowed = [...known].join(', ') || 'none: this operation answers no fields';
          throw new ApiError('VALIDATION_FAILED', `fields names what the answer does not have: ${unknown.join(', ') || '(empty)'}.`, {
            fieldErrors: [{ field: FIELDS_PARAMETER, code: 'NOT_ALLOWED', message: `Unknown field name${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => JSON.stringify(name)).join(', ') || '""'}; allowed: ${allowed}.` }],
          });
        }
      }
      if (taken.taken) {
        // Services never see `fields`: they answer the whole representation, as always.
        const path = queryAt >= 0 ? req.originalUrl.slice(0, queryAt) : req.originalUrl;
        req.originalUrl = taken.rest ? `${path}?${taken.rest}` : path;
        req.url = req.url.split('?', 1)[0] + (taken.rest ? `?${taken.rest}` : '');
      }
    }
    // A route a later version serves unchanged is not a use of the earlier version's operation:
    // calls of /v2/orders must not keep /v1/orders alive in its retirement's numbers.
    if (!recorder || route.servedAs !== route.version) return next();
    const elements = [operation.element, ...(search ? queryNames(search, operation) : [])];
    for (const [name, declared] of operation.headerParameters) if (req.headers[name] !== undefined) elements.push(`${operation.element} header.${declared}`);
    if (res.locals.forwardBody?.length && operation.bodyPaths.size > 0) {
      // Not JSON: the service answers 400; the operation alone is recorded.
      const read = forwardedJson(req, res);
      if (!read.refusal) bodyElements(read.value, operation, '', elements);
    }
    res.once('finish', () => {
      const response = operation.responses.get(res.statusCode);
      // A HEAD answer has no body: its caller read no field (its headers are still GET's, deprecation
      // headers too: rest-deprecations.ts), so it records the operation and what it sent, never the answer's fields.
      if (req.method === 'HEAD') {
        recorder.record(callerIdentityOf(req as Request, res), [...new Set(elements)]);
        return;
      }
      if (response && fields) elements.push(...response.envelope, ...fields.map((name) => response.prefix + name));
      else {
        // Not narrowed: the whole answer was read, nested fields too.
        if (operation.statuses.has(res.statusCode)) elements.push(`${operation.element} response.${res.statusCode}`);
        if (response) for (const name of response.names) elements.push(response.prefix + name);
      }
      recorder.record(callerIdentityOf(req as Request, res), [...new Set(elements)]);
    });
    next();
  };
}
