// The registry's REST elements, compiled once per route and method when the gateway starts (the
// route table, routing/router.ts), so a request only looks at the few entries of its own route:
// the operation, a query parameter or header it sends, a request body field present in its body,
// a response field present in its answer. A route with no entry costs nothing.
//
// A call that uses a deprecated element is answered with `Deprecation`, `Sunset` and `Link`; an
// answer that contains deprecated response fields names them in `Deprecated-Fields`. In a brownout
// window, or from the sunset on, a request that uses one gets 410 GONE, and a deprecated response
// field is left out of the answer instead (docs/evolving-the-api.md).
import type { RequestHandler } from 'express';
import { deprecationHeaders, type Deprecation, phaseAt, withoutAlternatives } from '@platform/deprecations';
import type { DeprecationOutcomes } from './deprecation-outcomes';
import { forwardedJson } from '../request-state';

/** A path into a JSON body: property names and `[]` (every item of an array). */
type FieldPath = string[];

interface ResponseField {
  status: string;
  /** As the registry writes it after `body.`: `trackingNumber`, `items[].sku`. */
  name: string;
  path: FieldPath;
  entry: Deprecation;
}

export interface RouteDeprecations {
  operation?: Deprecation;
  query: [name: string, entry: Deprecation][];
  headers: [name: string, entry: Deprecation][];
  requestFields: [path: FieldPath, entry: Deprecation][];
  responseFields: ResponseField[];
}

/** Rewrites a buffered JSON answer of a route with deprecated response fields (the proxy calls it before writing the head). */
export type AnswerRewrite = (status: number, body: Buffer) => Buffer;

// A place inside an alternative (`payment<kind=card>.brand`) is marked wherever its path is in the
// body (`payment.brand`), whichever alternative the value is: more often than needed, never less.
function fieldPath(text: string): FieldPath {
  return (withoutAlternatives(text).match(/\.[^.[\]{}]+|\[\]/g) ?? []).map((step) => (step === '[]' ? step : step.slice(1)));
}

/** `rest:GET /v1/orders/{id}/shipment` for the route `/orders/:id/shipment`, with parameter names left out. */
const operationKey = (method: string, path: string) => `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;

/** The registry's REST entries of one route and method at `path` (`/v1/orders/:id`: with the version it is served under), or undefined when it has none. */
export function compileRouteDeprecations(path: string, method: string, entries: readonly Deprecation[]): RouteDeprecations | undefined {
  const key = operationKey(method, path.replace(/:([A-Za-z]+)/g, '{$1}'));
  const compiled: RouteDeprecations = { query: [], headers: [], requestFields: [], responseFields: [] };
  for (const entry of entries) {
    const match = /^rest:([A-Z]+) (\S+)(?: (.+))?$/.exec(entry.element);
    if (!match || operationKey(match[1], match[2]) !== key) continue;
    const part = match[3];
    if (!part) compiled.operation = entry;
    else if (part.startsWith('query.')) compiled.query.push([part.slice('query.'.length), entry]);
    else if (part.startsWith('header.')) compiled.headers.push([part.slice('header.'.length).toLowerCase(), entry]);
    else if (part.startsWith('request.body.')) compiled.requestFields.push([fieldPath(part.slice('request.body'.length)), entry]);
    else {
      const response = /^response\.(\d{3})\.body\.(.+)$/.exec(part);
      // Path parameters, response headers and error codes are not matched per call: the operation's own entry covers them.
      if (response) compiled.responseFields.push({ status: response[1], name: response[2], path: fieldPath(`.${response[2]}`), entry });
    }
  }
  const any = compiled.operation !== undefined || compiled.query.length + compiled.headers.length + compiled.requestFields.length + compiled.responseFields.length > 0;
  return any ? compiled : undefined;
}

/** Whether `value` has something at `path` (through every item of an array); with `remove`, it is deleted there. */
function present(value: unknown, path: FieldPath, remove = false): boolean {
  if (path.length === 0) return value !== undefined;
  const [step, ...rest] = path;
  if (step === '[]') {
    if (!Array.isArray(value)) return false;
    let found = false;
    for (const item of value) found = present(item, rest, remove) || found;
    return found;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !Object.hasOwn(value, step)) return false;
  const record = value as Record<string, unknown>;
  if (rest.length === 0) {
    if (record[step] === undefined) return false;
    if (remove) delete record[step];
    return true;
  }
  return present(record[step], rest, remove);
}

function parseJson(body: Buffer | undefined): unknown {
  if (!body) return undefined;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return undefined; // the service answers 400 for it
  }
}

/**
 * After the body was read (pipeline.ts receiveBody): the deprecated elements this request uses,
 * judged now. 410 GONE in a brownout or past the sunset; otherwise the deprecation headers, and
 * for a route with deprecated response fields, the rewrite the proxy applies to its answer.
 */
export function enforceDeprecations(outcomes: DeprecationOutcomes): RequestHandler {
  return (req, res, next) => {
    const rules = (res.locals.route?.deprecations as Map<string, RouteDeprecations> | undefined)?.get(req.method === 'HEAD' ? 'GET' : req.method);
    if (!rules) return next();
    const used: Deprecation[] = [];
    if (rules.operation) used.push(rules.operation);
    if (rules.query.length > 0) {
      const query = new URL(req.originalUrl, 'http://gateway').searchParams;
      // A parameter sent empty is one not sent (docs/api.md, Lists): no use of it.
      for (const [name, entry] of rules.query) if (query.getAll(name).some((value) => value !== '')) used.push(entry);
    }
    for (const [name, entry] of rules.headers) if (req.headers[name] !== undefined) used.push(entry);
    if (rules.requestFields.length > 0) {
      const body = forwardedJson(req, res).value;
      for (const [path, entry] of rules.requestFields) if (present(body, path)) used.push(entry);
    }
    const { refusal } = outcomes.judge(req, res, used);
    if (refusal) throw refusal;
    if (used.length > 0) for (const [name, value] of Object.entries(deprecationHeaders(used))) res.setHeader(name, value);
    // A HEAD gets the headers of its GET (RFC 9110 §9.3.2), Deprecated-Fields too: the proxy asks
    // the service for the GET's answer, reads it as GET's is read and sends none of it. Its caller
    // reads no field, so no use of one is counted or logged (as usage/recording.ts records none).
    const head = req.method === 'HEAD';
    if (rules.responseFields.length > 0) {
      const rewrite: AnswerRewrite = (status, body) => {
        const fields = rules.responseFields.filter((field) => field.status === String(status));
        const answer = fields.length > 0 ? parseJson(body) : undefined;
        if (answer === undefined) return body;
        const named: string[] = [];
        const answered: Deprecation[] = [];
        let changed = false;
        for (const field of fields) {
          const phase = phaseAt(field.entry);
          // In a brownout or past the sunset the field is left out: the answer still works for a client that does not read it.
          const leaveOut = phase === 'brownout' || phase === 'sunset';
          if (!present(answer, field.path, leaveOut)) continue;
          if (!head) outcomes.record(req, res, field.entry, leaveOut ? phase : phase === 'dry-run' ? 'dry_run' : 'warned');
          answered.push(field.entry);
          if (leaveOut) changed = true;
          else named.push(field.name);
        }
        if (answered.length === 0) return body;
        for (const [name, value] of Object.entries(deprecationHeaders([...used, ...answered]))) res.setHeader(name, value);
        if (named.length > 0) res.setHeader('Deprecated-Fields', [...new Set(named)].join(', '));
        return changed ? Buffer.from(JSON.stringify(answer)) : body;
      };
      res.locals.rewriteAnswer = rewrite;
    }
    next();
  };
}
