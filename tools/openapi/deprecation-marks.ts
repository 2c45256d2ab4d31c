// Marks the OpenAPI document from the deprecation registry (contracts/deprecations.yaml): each REST
// or webhook element an entry names gets `deprecated: true` (an operation, a parameter, a schema property;
// a property reached through a $ref is marked in its named schema, so every operation that shares
// the schema shows it) with the entry's dates, replacement and notice as extensions:
// `x-deprecation-announced`, `x-sunset`, `x-replacement`, `x-deprecation-notice`, and the notice as
// `externalDocs` where OpenAPI allows it (operations, schemas). Descriptions are left as they are:
// a changed description is a meaning change to the contract gate.
import type { Deprecation } from '@platform/deprecations';

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function marks(entry: Deprecation, externalDocs: boolean): Json {
  return {
    deprecated: true,
    'x-deprecation-announced': entry.announced,
    'x-sunset': entry.sunset,
    'x-replacement': entry.replacement.replace(/^(rest|webhook):/, ''),
    'x-deprecation-notice': entry.notice,
    ...(externalDocs ? { externalDocs: { description: `Deprecated on ${entry.announced}, removed on ${entry.sunset}`, url: entry.notice } } : {}),
  };
}

/** The object a `$ref` (`#/components/...`) points at, or the node itself. */
function resolve(document: Json, node: unknown): Json | undefined {
  if (!isObject(node)) return undefined;
  if (typeof node.$ref !== 'string') return node;
  let target: unknown = document;
  for (const key of node.$ref.replace(/^#\//, '').split('/')) target = isObject(target) ? target[key] : undefined;
  return resolve(document, target);
}

/** Walks `.name` and `[]` steps from a schema to the property schema they name (the last step's own node, not its $ref target). */
function propertyOf(document: Json, schema: unknown, steps: string[]): Json | undefined {
  let node: unknown = schema;
  for (const step of steps) {
    const current = resolve(document, node);
    if (!current) return undefined;
    if (step === '[]') node = current.items;
    else node = isObject(current.properties) ? current.properties[step] : undefined;
  }
  return isObject(node) ? node : undefined;
}

/** Marks every REST entry of `entries` in `document`; answers the entries it found nothing to mark for. */
export function markDeprecations(document: Json, entries: readonly Deprecation[]): string[] {
  const unmarked: string[] = [];
  const paths = document.paths as Record<string, Record<string, Json>>;
  for (const entry of entries) {
    if (entry.element.startsWith('webhook:')) {
      if (!markWebhook(document, entry)) unmarked.push(entry.element);
      continue;
    }
    const match = /^rest:([A-Z]+) \/(v\d+)(\/\S*)(?: (.+))?$/.exec(entry.element);
    if (!match) continue;
    const [, method, major, rest, part] = match;
    // v1's operations are listed under the server's /v1; a later major's with their prefix.
    const operation = paths[major === 'v1' ? rest : `/${major}${rest}`]?.[method.toLowerCase()];
    let target: Json | undefined;
    let externalDocs = true;
    if (!operation) target = undefined;
    else if (!part) target = operation;
    else if (/^(query|header|path)\./.test(part)) {
      const [where, name] = [part.slice(0, part.indexOf('.')), part.slice(part.indexOf('.') + 1)];
      target = (operation.parameters as unknown[]).filter(isObject).find((parameter) => parameter.in === where && String(parameter.name).toLowerCase() === name.toLowerCase());
      externalDocs = false;
    } else {
      const body = /^(request|response\.(\d{3}))\.body((?:\.[^.[\]]+|\[\])+)$/.exec(part);
      const container = !body ? undefined : body[1] === 'request' ? resolve(document, operation.requestBody) : resolve(document, (operation.responses as Json)[body[2]]);
      const media = isObject(container?.content) ? (container.content as Json)['application/json'] : undefined;
      if (body && isObject(media)) target = propertyOf(document, media.schema, (body[3].match(/\.[^.[\]]+|\[\]/g) ?? []).map((step) => (step === '[]' ? step : step.slice(1))));
    }
    if (target) Object.assign(target, marks(entry, externalDocs));
    else unmarked.push(entry.element);
  }
  return unmarked;
}

/** Marks a webhook (`webhook:<type>`) or its payload field (`webhook:<type> body.data.<field>`); false when the document has neither. */
function markWebhook(document: Json, entry: Deprecation): boolean {
  const match = /^webhook:(\S+)(?: body((?:\.[^.[\]]+|\[\])+))?$/.exec(entry.element);
  const webhook = match && isObject(document.webhooks) ? resolve(document, (document.webhooks as Json)[match[1]]) : undefined;
  const operation = webhook && isObject(webhook.post) ? webhook.post : undefined;
  if (!match || !operation) return false;
  if (!match[2]) {
    Object.assign(operation, marks(entry, true));
    return true;
  }
  const requestBody = resolve(document, operation.requestBody);
  const media = isObject(requestBody?.content) ? (requestBody.content as Json)['application/json'] : undefined;
  const target = isObject(media) ? propertyOf(document, media.schema, (match[2].match(/\.[^.[\]]+|\[\]/g) ?? []).map((step) => (step === '[]' ? step : step.slice(1)))) : undefined;
  if (target) Object.assign(target, marks(entry, false));
  return Boolean(target);
}

/**
 * `deprecated: true` marks the registry did not make (each of its marks carries `x-sunset`): set by
 * hand in an endpoint or schema declaration (zod's `.meta({ deprecated: true })`). Each with its
 * JSON pointer and, for an operation, a parameter or a webhook, the element the registry would name.
 */
export function unregisteredMarksOf(document: Json): { pointer: string; element?: string }[] {
  const found: { pointer: string; element?: string }[] = [];
  const step = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');
  const walk = (node: unknown, pointer: string[]): void => {
    if (Array.isArray(node)) node.forEach((item, index) => walk(item, [...pointer, String(index)]));
    if (!isObject(node)) return;
    if (node.deprecated === true && !('x-sunset' in node)) found.push({ pointer: `#/${pointer.map(step).join('/')}`, element: elementAt(pointer, node) });
    for (const [key, value] of Object.entries(node)) walk(value, [...pointer, key]);
  };
  walk(document, []);
  return found;
}

/** The registry's name of what sits at `pointer`, where it is an operation, a parameter or a webhook. */
function elementAt(pointer: string[], node: Json): string | undefined {
  const [where, name, method, part] = pointer;
  if (where === 'webhooks' && method === 'post' && pointer.length === 3) return `webhook:${name}`;
  if (where !== 'paths' || !method) return undefined;
  // v1's operations are listed under the server's /v1; a later major's with their prefix.
  const operation = `rest:${method.toUpperCase()} ${/^\/v\d+\//.test(name) ? name : `/v1${name}`}`;
  if (pointer.length === 3) return operation;
  if (part === 'parameters' && pointer.length === 5 && typeof node.in === 'string' && typeof node.name === 'string') return `${operation} ${node.in}.${node.name}`;
  return undefined;
}
