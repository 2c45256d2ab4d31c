// The spec's four steps of a field replacement (§Versioning 4), run for real on the running stack
// for one REST response field, one GraphQL field and one RPC field, each replaced in the product:
// Rating.reviewCount beside count, Product.averageRating beside rating,
// AdjustStockRequest.change_reason beside reason, the old ones deprecated in the repository's own
// contracts/deprecations.yaml (announced 2026-11-27, sunset 2027-06-01), which the stack's gateway
// and inventory-service read. A client keeps using the old fields and sees the deprecation marks;
// on a copy of the repository with the old fields removed from their sources (the contracts
// regenerated there) and the sunset moved into the past, the contract gate refuses the removal,
// naming that client; the client moves; after the (test-short) zero-use window the same removal
// passes; released there, the registry entries go and the gate still passes. The gate, the usage
// export and the release run as a service team runs them (`contract:check -- --root`,
// `contract:usage -- --export`, `contract:release -- --root`).
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { credentials, Metadata } from '@grpc/grpc-js';
import { serviceTokenSource } from '@platform/auth';
import { createApiClient, type Schemas } from '@platform/sdk';
import { InventoryClient } from '@platform/inventory-contract';
import { gatewayUrl, inventoryAddress } from './stack';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../../..');
/** The test's zero-use window (CONTRACT_ZERO_USE_SECONDS), longer than a use takes to reach the gate here; production's is 14 days. */
const WINDOW_S = 25;
const client = { name: 'replacement-e2e', version: '1.4.2' };
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

const OLD = {
  rest: 'rest:GET /v1/products/{id}/rating response.200.body.count',
  graphql: 'graphql:Product.rating',
  proto: 'proto:inventory.v1.AdjustStockRequest.reason',
};
const NEW = {
  rest: 'rest:GET /v1/products/{id}/rating response.200.body.reviewCount',
  graphql: 'graphql:Product.averageRating',
  proto: 'proto:inventory.v1.AdjustStockRequest.change_reason',
};
/** What contracts/deprecations.yaml says of the three (announced 2026-11-27, sunset 2027-06-01). */
const ANNOUNCED = `@${Date.parse('2026-11-27T00:00:00Z') / 1000}`;
const SUNSET = 'Tue, 01 Jun 2027 00:00:00 GMT';

/**
 * A copy of the repository's tracked files (node_modules linked), where a service team removes the
 * three old fields from their sources and regenerates the contracts as it would in its branch,
 * with the registry's dates moved into the past (the sunset passed).
 */
async function repositoryWithRemovals(): Promise<string> {
  const copy = mkdtempSync(path.join(tmpdir(), 'replacement-'));
  const { stdout } = await run('git', ['ls-files', '-z'], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter(Boolean)) {
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    try {
      cpSync(path.join(root, file), path.join(copy, file));
    } catch {
      // a tracked file deleted in the working tree
    }
  }
  symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  const edit = (relative: string, change: (text: string) => string) => {
    const file = path.join(copy, relative);
    const before = readFileSync(file, 'utf8');
    const after = change(before);
    if (after === before) throw new Error(`the removal did not apply to ${relative}`);
    writeFileSync(file, after);
  };
  // REST: Rating.count, from the catalog's representation (the OpenAPI document is generated from it).
  edit('apps/catalog-service/src/products/representation.ts', (text) => text.replace(/\n {2}count: z\.number\(\)[^\n]*\n/, '\n').replace(/\n {4}count: reviewCountOf\(row\),\n/, '\n'));
  // GraphQL: Product.rating, from the catalog subgraph (the supergraph is composed from it).
  edit('apps/catalog-service/src/graphql/schema.graphql', (text) => text.replace(/\n {2}"Average review stars, 0 when there are no reviews\."\n {2}rating: Float! @deprecated[^\n]*\n/, '\n'));
  // gRPC: AdjustStockRequest.reason, its number and name reserved.
  edit('proto/inventory/v1/inventory.proto', (text) => text.replace(/\n[^\n]*Why \(a delivery[^\n]*\n {2}string reason = 3 \[deprecated = true\];\n/, '\n  reserved 3;\n  reserved "reason";\n')); // a removed field's number and name stay reserved
  // The sunset passed (the announcement before it).
  edit('contracts/deprecations.yaml', (text) => text.replaceAll('announced: 2026-11-27', `announced: ${day(-2)}`).replaceAll('sunset: 2027-06-01', `sunset: ${day(-1)}`));
  await run(process.execPath, ['tools/openapi/generate.mjs'], { cwd: copy });
  await run(process.execPath, ['tools/graphql/compose-supergraph.mjs'], { cwd: copy });
  const openapi = JSON.parse(readFileSync(path.join(copy, 'apps/gateway/src/openapi/openapi.json'), 'utf8')) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
  if (openapi.components.schemas.Rating.properties.count) throw new Error('the regenerated OpenAPI document still has Rating.count');
  return copy;
}

const storeEnv = () => ({
  ...process.env,
  DATA_DIR: process.env.E2E_DATA_DIR,
  USAGE_KEY_PREFIX: process.env.E2E_USAGE_KEY_PREFIX,
  ...(process.env.E2E_REDIS_URL ? { REDIS_URL: process.env.E2E_REDIS_URL } : { REDIS_URL: '' }),
});

/** `npm run contract:usage -- --export <file>`: the usage export, once it shows `until` holds (recording flushes about once a second). */
async function exportUsage(file: string, until: (elements: Record<string, { lastUsed: string; callers: { caller: string }[] }>) => boolean) {
  for (let attempt = 0; ; attempt++) {
    await run(process.execPath, ['tools/ts-run.mjs', 'tools/contracts/usage.ts', '--export', file], { cwd: root, env: storeEnv() });
    const exported = JSON.parse(readFileSync(file, 'utf8')) as { elements: Record<string, { lastUsed: string; callers: { caller: string }[] }> };
    if (until(exported.elements)) return exported;
    if (attempt >= 10) throw new Error(`the usage export never showed what was expected: ${JSON.stringify(exported.elements).slice(0, 2_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** `npm run contract:check -- --root <copy> --usage <file>`, with the test's zero-use window. */
async function contractCheck(copy: string, usageFile: string): Promise<{ passed: boolean; output: string }> {
  const env = { ...process.env, CONTRACT_ZERO_USE_SECONDS: String(WINDOW_S) };
  try {
    const { stdout } = await run(process.execPath, ['tools/ts-run.mjs', 'tools/contracts/check.ts', '--root', copy, '--usage', usageFile], { cwd: root, env, maxBuffer: 16 * 1024 * 1024 });
    return { passed: true, output: stdout };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    if (failure.code !== 1) throw error;
    return { passed: false, output: failure.stdout ?? '' };
  }
}

/** The gate's block for one element: its heading line and the lines under it. */
function blockOf(output: string, element: string): string {
  const lines = output.split('\n');
  const start = lines.findIndex((line) => / {2,}|^BREAKING /.test(line) && line.includes(element));
  if (start < 0) throw new Error(`the gate printed nothing for ${element}:\n${output}`);
  return lines.slice(start, start + 3).join('\n');
}

describe('replacing a field in four steps, for REST, GraphQL and gRPC', () => {
  const inventory = new InventoryClient(inventoryAddress, credentials.createInsecure());
  let copy: string | undefined;
  let work: string | undefined;
  afterAll(() => {
    inventory.close();
    for (const dir of [copy, work]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('marks the old fields, refuses their removal while a client uses them, naming it, and lets it pass after the window without use', async () => {
    work = mkdtempSync(path.join(tmpdir(), 'replacement-usage-'));

    // A client app of its own: a signed-up user, identified by its name/version headers (the SDK's `client`).
    const anonymous = createApiClient(gatewayUrl, { client });
    const email = `replacement-${Date.now()}@example.com`;
    const user = (await anonymous.POST('/users', { body: { name: 'Replacement E2E', email, password: 'e2e-password-1' } })).data as Schemas['User'];
    const token = (await anonymous.POST('/tokens', { body: { email, password: 'e2e-password-1' } })).data?.accessToken as string;
    const api = createApiClient(gatewayUrl, { client, token });
    const product = (await api.GET('/products', { params: { query: { size: 1 } } })).data?.items[0] as Schemas['Product'];
    const serviceToken = await serviceTokenSource(process.env.E2E_JWT_SECRET ?? '', 'orders-service')();
    const metadata = () => {
      const sent = new Metadata();
      sent.set('authorization', `Bearer ${serviceToken}`);
      return sent;
    };
    const sku = `E2E-REPL-${Date.now()}`;
    await new Promise((resolve, reject) => inventory.setStock({ sku, onHand: 10, requestId: `${sku}-set` }, metadata(), (error, reply) => (error ? reject(error) : resolve(reply))));
    let changes = 0;
    /** AdjustStock with the old or the new field; the response metadata. */
    const adjust = (field: 'reason' | 'changeReason') =>
      new Promise<Metadata>((resolve, reject) => {
        let received = new Metadata();
        const call = inventory.adjustStock({ sku, delta: 1, reason: '', changeReason: '', [field]: 'a delivery', requestId: `${sku}-${++changes}` }, metadata(), (error) => (error ? reject(error) : resolve(received)));
        call.on('metadata', (sent: Metadata) => (received = sent));
      });
    const readRating = async (fields: ('productId' | 'average' | 'count' | 'reviewCount')[]) => {
      const answer = await api.GET('/products/{id}/rating', { params: { path: { id: product.id }, query: { fields } } });
      expect(answer.response.status).toBe(200);
      // Both fields are served, the same number, whatever `fields` says.
      expect(answer.data?.reviewCount).toBe(answer.data?.count);
      return answer.response.headers;
    };
    const graphql = async (query: string, variables: Record<string, unknown> = {}) => {
      const answer = await fetch(`${gatewayUrl}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-client-name': client.name, 'x-client-version': client.version },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await answer.json()) as { data?: Record<string, Record<string, unknown>>; errors?: unknown };
      expect(body.errors).toBeUndefined();
      return { headers: answer.headers, data: body.data ?? {} };
    };
    const queryProduct = (field: 'rating' | 'averageRating') => graphql(`query ProductCard($id: ID!) { product(id: $id) { ...Card } } fragment Card on Product { id ${field} }`, { id: product.id });

    // Steps 1-2: the new fields exist beside the old, which say they are deprecated; the client still uses the old ones.
    const restOld = await readRating(['productId', 'count']);
    expect([restOld.get('deprecation'), restOld.get('sunset'), restOld.get('deprecated-fields')]).toEqual([ANNOUNCED, SUNSET, 'count']);
    expect(restOld.get('link')).toBe('<https://docs.example.com/changes/rating-review-count>; rel="deprecation"; type="text/html"');
    const introspected = await graphql('{ __type(name: "Product") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } } }');
    const fields = introspected.data.__type.fields as { name: string; isDeprecated: boolean; deprecationReason: string | null }[];
    expect(fields.find((field) => field.name === 'rating')).toEqual({ name: 'rating', isDeprecated: true, deprecationReason: 'Use averageRating; removed on 2027-06-01.' });
    expect(fields.find((field) => field.name === 'averageRating')).toMatchObject({ isDeprecated: false });
    const graphOld = await queryProduct('rating');
    expect(graphOld.data.product.rating).toEqual(expect.any(Number));
    expect([graphOld.headers.get('deprecation'), graphOld.headers.get('sunset')]).toEqual([ANNOUNCED, SUNSET]);
    const rpcOld = await adjust('reason');
    expect([rpcOld.get('deprecation'), rpcOld.get('sunset')]).toEqual([[ANNOUNCED], [SUNSET]]);
    const caller = `user:${user.id} (${client.name}/${client.version})`;
    const usageFile = path.join(work, 'usage.json');
    // Wait for this client's own calls (recording flushes about once a second): another suite's call
    // of the same element may be recorded first, and the gate names only the callers the export has.
    const usedBy = (elements: Record<string, { callers: { caller: string }[] }>, element: string, who: string) => (elements[element]?.callers ?? []).some((entry) => entry.caller.includes(who));
    await exportUsage(usageFile, (elements) => usedBy(elements, OLD.rest, caller) && usedBy(elements, OLD.graphql, caller) && usedBy(elements, OLD.proto, 'service:orders-service'));

    // Step 3, measured: the gate refuses each removal and names who still uses the field.
    copy = await repositoryWithRemovals();
    const refused = await contractCheck(copy, usageFile);
    expect(refused.passed).toBe(false);
    expect(blockOf(refused.output, OLD.rest)).toMatch(new RegExp(`REFUSED: still used .* by .*${caller.replace(/[()/.]/g, '\\$&')}`));
    expect(blockOf(refused.output, OLD.graphql)).toContain(caller);
    expect(blockOf(refused.output, OLD.proto)).toContain('service:orders-service');

    // The client moves to the new fields: GraphQL and gRPC stop answering with the marks (a REST answer still holds count).
    const moved = Date.now();
    await readRating(['productId', 'reviewCount']);
    const graphNew = await queryProduct('averageRating');
    expect(graphNew.data.product.averageRating).toBe(graphOld.data.product.rating);
    expect(graphNew.headers.get('deprecation')).toBeNull();
    expect((await adjust('changeReason')).get('deprecation')).toEqual([]);
    await exportUsage(usageFile, (elements) => Boolean(elements[NEW.rest]?.callers.some((entry) => entry.caller === caller)) && Boolean(elements[NEW.graphql]) && Boolean(elements[NEW.proto]));

    // Step 4: no use for the whole window, the sunset passed: the removal passes.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, moved + WINDOW_S * 1000 + 200 - Date.now())));
    await exportUsage(usageFile, () => true);
    const passed = await contractCheck(copy, usageFile);
    expect(blockOf(passed.output, OLD.rest)).toMatch(/allowed: replacement complete/);
    expect(blockOf(passed.output, OLD.graphql)).toMatch(/allowed: replacement complete/);
    expect(blockOf(passed.output, OLD.proto)).toMatch(/allowed: replacement complete/);
    expect(passed.output).toMatch(/contract:check: .* 0 refused, 0 registry problems: passed/);
    expect(passed.passed).toBe(true);

    // Released without the old fields, the registry entries go, and the gate still passes.
    await run('git', ['init', '-q'], { cwd: copy });
    // contract:release stamps the commit it released: the copy is a repository of one commit, the removal.
    await run('git', ['add', '-A'], { cwd: copy });
    await run('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', 'commit', '-q', '-m', 'the removal'], { cwd: copy });
    await run(process.execPath, ['tools/ts-run.mjs', 'tools/contracts/release.ts', '--root', copy], { cwd: root });
    writeFileSync(path.join(copy, 'contracts/deprecations.yaml'), 'deprecations: []\n');
    const afterwards = await contractCheck(copy, usageFile);
    expect(afterwards.output).toMatch(/contract:check: 0 breaking, .* 0 refused, 0 registry problems: passed/);
    expect(afterwards.passed).toBe(true);
  }, 180_000);
});
