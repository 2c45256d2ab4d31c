// The spec's four steps of a field replacement (§Versioning 4), run for real on the running stack
// for one REST response field, one GraphQL field and one RPC field: the new field is there and
// the old one is deprecated with dates (a test registry); a client keeps using the old one and
// the contract gate refuses its removal, naming that client; the client moves; after the
// (test-short) zero-use window, with the sunset passed, the same removal passes the gate.
// The gate and the usage export run as a service team runs them (`contract:check`,
// `contract:usage -- --export`), on a copy of the contracts with the removals applied.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
  graphql: 'graphql:Product.imageUrl',
  proto: 'proto:inventory.v1.AdjustStockRequest.reason',
};

/** A copy of what the gate reads, with the three old fields removed and the test registry in place. */
function contractsWithRemovals(): string {
  const copy = mkdtempSync(path.join(tmpdir(), 'replacement-'));
  const take = (relative: string) => cpSync(path.join(root, relative), path.join(copy, relative), { recursive: true });
  take('contracts');
  take('proto');
  take('apps/gateway/src/openapi/openapi.json');
  take('apps/gateway/src/graphql/supergraph.graphql');
  for (const app of readdirSync(path.join(root, 'apps')).filter((name) => name.endsWith('-service'))) {
    try {
      take(`apps/${app}/src/graphql/schema.graphql`);
    } catch {
      // a service without a subgraph
    }
  }
  const edit = (relative: string, change: (text: string) => string) => {
    const file = path.join(copy, relative);
    const before = readFileSync(file, 'utf8');
    const after = change(before);
    if (after === before) throw new Error(`the removal did not apply to ${relative}`);
    writeFileSync(file, after);
  };
  // REST: Rating.count (only GET /products/{id}/rating answers a Rating).
  edit('apps/gateway/src/openapi/openapi.json', (text) => {
    const document = JSON.parse(text) as { components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> } };
    const rating = document.components.schemas.Rating;
    delete rating.properties.count;
    rating.required = rating.required?.filter((name) => name !== 'count');
    return `${JSON.stringify(document, null, 2)}\n`;
  });
  // GraphQL: Product.imageUrl, from the supergraph and the catalog subgraph.
  edit('apps/gateway/src/graphql/supergraph.graphql', (text) => text.replace(/\n {2}"""A picture of the product, when there is one\."""\n {2}imageUrl: String[^\n]*\n/, '\n'));
  edit('apps/catalog-service/src/graphql/schema.graphql', (text) => text.replace(/\n {2}"A picture of the product, when there is one\."\n {2}imageUrl: String\n/, '\n'));
  // gRPC: AdjustStockRequest.reason.
  edit('proto/inventory/v1/inventory.proto', (text) => text.replace(/\n[^\n]*Why \(a delivery[^\n]*\n {2}string reason = 3;\n/, '\n'));
  // The replacement's registry: announced when the new field came, sunset passed.
  const entries = [
    [OLD.rest, 'rest:GET /v1/products/{id}/rating response.200.body.distribution'],
    [OLD.graphql, 'graphql:Product.name'],
    [OLD.proto, 'proto:inventory.v1.AdjustStockRequest.request_id'],
  ];
  writeFileSync(
    path.join(copy, 'contracts/deprecations.yaml'),
    `deprecations:\n${entries.map(([element, replacement]) => `  - element: "${element}"\n    replacement: "${replacement}"\n    announced: ${day(-2)}\n    sunset: ${day(-1)}\n    notice: https://docs.example.com/changes/replacement-e2e\n`).join('')}`,
  );
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
  let copy: string;
  let work: string;
  afterAll(() => {
    inventory.close();
    rmSync(copy, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('refuses the removal while a client uses the old field, naming it, and lets it pass after the window without use', async () => {
    copy = contractsWithRemovals();
    work = mkdtempSync(path.join(tmpdir(), 'replacement-usage-'));
    mkdirSync(work, { recursive: true });

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
    const adjust = (reason: string) =>
      new Promise((resolve, reject) => inventory.adjustStock({ sku, delta: 1, reason, requestId: `${sku}-${++changes}` }, metadata(), (error, reply) => (error ? reject(error) : resolve(reply))));
    const readRating = async (fields: ('productId' | 'average' | 'count' | 'distribution')[]) => {
      const answer = await api.GET('/products/{id}/rating', { params: { path: { id: product.id }, query: { fields } } });
      expect(answer.response.status).toBe(200);
      // The answer stays whole whatever `fields` says.
      expect(Object.keys(answer.data ?? {}).sort()).toEqual(['average', 'count', 'distribution', 'productId']);
    };
    const queryProduct = async (selection: string) => {
      const answer = await fetch(`${gatewayUrl}/v1/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-client-name': client.name, 'x-client-version': client.version },
        body: JSON.stringify({ query: `query ProductCard($id: ID!) { product(id: $id) { ...Card } } fragment Card on Product { id ${selection} }`, variables: { id: product.id } }),
      });
      const body = (await answer.json()) as { data?: { product: Record<string, unknown> }; errors?: unknown };
      expect(body.errors).toBeUndefined();
      expect(body.data?.product.id).toBe(product.id);
    };

    // Steps 1-2: the new fields exist beside the old; the client still reads the old ones.
    await readRating(['productId', 'count']);
    await queryProduct('imageUrl');
    await adjust('a delivery');
    const caller = `user:${user.id} (${client.name}/${client.version})`;
    const usageFile = path.join(work, 'usage.json');
    await exportUsage(usageFile, (elements) => Object.values(OLD).every((element) => elements[element]));

    // Step 3, measured: the gate refuses each removal and names who still uses the field.
    const refused = await contractCheck(copy, usageFile);
    expect(refused.passed).toBe(false);
    expect(blockOf(refused.output, OLD.rest)).toMatch(new RegExp(`REFUSED: still used .* by .*${caller.replace(/[()/.]/g, '\\$&')}`));
    expect(blockOf(refused.output, OLD.graphql)).toContain(caller);
    expect(blockOf(refused.output, OLD.proto)).toContain('service:orders-service');

    // The client moves to the new fields.
    const moved = Date.now();
    await readRating(['productId', 'distribution']);
    await queryProduct('name');
    await adjust('');
    await exportUsage(usageFile, (elements) => Boolean(elements[`rest:GET /v1/products/{id}/rating response.200.body.distribution`]?.callers.some((entry) => entry.caller === caller)) && Boolean(elements['graphql:Product.name']));

    // Step 4: no use for the whole window, the sunset passed: the removal passes.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, moved + WINDOW_S * 1000 + 200 - Date.now())));
    await exportUsage(usageFile, () => true);
    const passed = await contractCheck(copy, usageFile);
    expect(blockOf(passed.output, OLD.rest)).toMatch(/allowed: replacement complete/);
    expect(blockOf(passed.output, OLD.graphql)).toMatch(/allowed: replacement complete/);
    expect(blockOf(passed.output, OLD.proto)).toMatch(/allowed: replacement complete/);
    expect(passed.output).toMatch(/contract:check: .* 0 refused, 0 registry problems: passed/);
    expect(passed.passed).toBe(true);
  }, 120_000);
});
