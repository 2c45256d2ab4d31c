// The published contract, checked on every response the suites receive: the status must be one
// the document lists for the operation, the API's headers must be documented and match, and the
// body must match its schema with no field the document does not declare. The document is the
// one the gateway serves (GET /v1/openapi.json); a mismatch fails the request that saw it.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Middleware } from '@platform/sdk';
import type { Exchange } from '@platform/test-kit';
import { gatewayUrl } from './stack';

/** Headers of the API's own: when a response carries one, the document must name it there. */
const API_HEADERS = ['etag', 'location', 'x-request-id', 'ratelimit', 'ratelimit-policy', 'retry-after', 'deprecation', 'sunset', 'link', 'deprecated-fields', 'www-authenticate', 'allow'];
const COUNTS_DIR = path.resolve(__dirname, '../../../tmp/e2e-contract');

type Json = Record<string, unknown>;
interface ResponseObject {
  headers?: Record<string, Json>;
  content?: Record<string, { schema: Json }>;
}

/**
 * `strict`: everything above. `documented`: for hostile input (fuzz, OWASP), only responses whose
 * status the operation documents are checked (the rest are the campaigns' own business).
 */
export type ContractMode = 'strict' | 'documented';

/** Closes every declared object: a field the document does not name is a mismatch. */
function closeObjects(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closeObjects);
  if (!schema || typeof schema !== 'object') return schema;
  const copy = Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, key === 'properties' ? Object.fromEntries(Object.entries(value as Json).map(([name, sub]) => [name, closeObjects(sub)])) : closeObjects(value)]));
  if ('properties' in copy && !('additionalProperties' in copy)) copy.additionalProperties = false;
  return copy;
}

export class Contract {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: { pattern: RegExp; template: string }[];
  validated = 0;

  constructor(private readonly document: Json) {
    const components = document.components as Json;
    this.ajv.addSchema({ $id: 'openapi.json', components: { schemas: closeObjects(components.schemas) } });
    this.templates = Object.keys(document.paths as Json)
      // Literal paths first: /orders/search is not /orders/{id}.
      .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
      .map((template) => ({ template, pattern: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`) }));
  }

  static async load(): Promise<Contract> {
    const res = await fetch(`${gatewayUrl}/v1/openapi.json`);
    return new Contract((await res.json()) as Json);
  }

  private resolve<T>(object: T | { $ref: string }): T {
    let current: unknown = object;
    while (current && typeof current === 'object' && '$ref' in current) {
      const pointer = (current as { $ref: string }).$ref.replace(/^#\//, '').split('/');
      current = pointer.reduce<unknown>((node, key) => (node as Json)[key.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
    }
    return current as T;
  }

  private validatorFor(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.validators.get(key);
    if (!validate) {
      const rebased = JSON.parse(key.replace(/"#\/components\/schemas\//g, '"openapi.json#/components/schemas/')) as Json;
      validate = this.ajv.compile(closeObjects(rebased) as Json);
      this.validators.set(key, validate);
    }
    return validate;
  }

  /** The mismatches of one exchange (empty when it keeps the contract, or is outside it). */
  mismatches(method: string, url: string, status: number, headers: Headers, body: unknown, text: string, mode: ContractMode = 'strict'): string[] {
    const pathname = new URL(url, 'http://contract').pathname;
    // Outside /v1 (health, /docs, unversioned aliases, other versions) is not this document's.
    if (!pathname.startsWith('/v1/') || method === 'OPTIONS' || method === 'HEAD') return [];
    const apiPath = pathname.slice(3);
    const where = `${method} ${pathname} → ${status}`;
    const template = this.templates.find(({ pattern }) => pattern.test(apiPath))?.template;
    let response: ResponseObject | undefined;
    if (!template) {
      if (status !== 404) return mode === 'strict' ? [`${where}: the path is not in the document, so it must answer 404`] : [];
      response = this.resolve<ResponseObject>({ $ref: '#/components/responses/NotFound' });
    } else {
      const operation = (this.document.paths as Record<string, Record<string, { responses: Record<string, ResponseObject> }>>)[template][method.toLowerCase()];
      if (!operation) {
        if (status !== 405) return mode === 'strict' ? [`${where}: ${template} has no ${method}, so it must answer 405`] : [];
        response = this.resolve<ResponseObject>({ $ref: '#/components/responses/MethodNotAllowed' });
      } else {
        const listed = operation.responses[String(status)];
        // `default` stands for the server's own failures (500); every client error is listed.
        if (!listed && !(status >= 500 && operation.responses.default)) return mode === 'strict' ? [`${where}: status ${status} is not documented for ${method} ${template}`] : [];
        response = this.resolve<ResponseObject>(listed ?? operation.responses.default);
      }
    }
    this.validated += 1;
    const problems: string[] = [];
    const documented = Object.fromEntries(Object.entries(response.headers ?? {}).map(([name, header]) => [name.toLowerCase(), this.resolve<Json>(header)]));
    for (const [name, header] of Object.entries(documented)) {
      const value = headers.get(name);
      if (value === null) {
        if (header.required) problems.push(`${where}: the required header ${name} is missing`);
        continue;
      }
      const validate = this.validatorFor(header.schema as Json);
      if (!validate(value)) problems.push(`${where}: header ${name}: ${JSON.stringify(value)} ${this.ajv.errorsText(validate.errors)}`);
    }
    for (const name of API_HEADERS) if (headers.has(name) && !documented[name]) problems.push(`${where}: header ${name} is not documented for this response`);
    const contentType = headers.get('content-type')?.split(';')[0].trim();
    if (!response.content) {
      if (text !== '') problems.push(`${where}: the document declares no body, yet one came`);
    } else {
      const media = contentType ? response.content[contentType] : undefined;
      if (!media) problems.push(`${where}: content type ${contentType ?? '(none)'} is not documented (${Object.keys(response.content).join(', ')})`);
      else {
        const validate = this.validatorFor(media.schema);
        if (!validate(body)) problems.push(`${where}: body ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}`);
      }
    }
    return problems;
  }

  /** Throws what is wrong with an exchange, so the request that saw it fails its test. */
  check(method: string, url: string, status: number, headers: Headers, body: unknown, text: string, mode: ContractMode = 'strict'): void {
    const problems = this.mismatches(method, url, status, headers, body, text, mode);
    if (problems.length) throw new Error(`The response breaks the published contract:\n${problems.join('\n')}`);
  }
}

/**
 * The suite's contract: loaded once before a file's tests, its count of checked responses written
 * after them for the global teardown to add up and print. Hand `onResponse` to the test client and
 * `middleware` to the SDK; both check every response once the contract is loaded.
 */
export function useContract(file: string, mode: ContractMode = 'strict'): { onResponse: (text: string, exchange: Exchange) => void; middleware: Middleware } {
  let contract: Contract | undefined;
  beforeAll(async () => {
    contract = await Contract.load();
  });
  afterAll(() => {
    mkdirSync(COUNTS_DIR, { recursive: true });
    writeFileSync(path.join(COUNTS_DIR, `${path.basename(file)}.json`), JSON.stringify({ validated: contract?.validated ?? 0 }));
  });
  const loaded = (): Contract => {
    if (!contract) throw new Error('The contract loads in beforeAll: call the API inside tests or hooks.');
    return contract;
  };
  return {
    onResponse: (_text, { method, path: url, response }) => loaded().check(method, url, response.status, response.headers, response.body, response.text, mode),
    middleware: {
      onResponse: async ({ request, response }) => {
        const text = await response.clone().text();
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        loaded().check(request.method, request.url, response.status, response.headers, body, text, mode);
        return undefined;
      },
    },
  };
}

/** Global setup: forget the last run's counts. */
export function resetContractCounts(): void {
  rmSync(COUNTS_DIR, { recursive: true, force: true });
}

/** Global teardown: the responses checked against the contract, per suite and in all. */
export function reportContractCounts(): void {
  let files: string[] = [];
  try {
    files = readdirSync(COUNTS_DIR);
  } catch {
    return;
  }
  const counts = files.map((file) => [file.replace(/\.json$/, ''), (JSON.parse(readFileSync(path.join(COUNTS_DIR, file), 'utf8')) as { validated: number }).validated] as const);
  const total = counts.reduce((sum, [, count]) => sum + count, 0);
  console.log(`contract: ${total} responses validated against /v1/openapi.json (${counts.map(([file, count]) => `${file} ${count}`).join(', ')})`);
}
