// The pages for people, opened in a real browser (Debian's chromium driven by playwright-core):
// the API reference shows the operations, and GraphiQL runs a query with a token and shows the
// result. The browser may reach this machine only: every other address is refused and counted.
// Screenshots go to dist/artifacts/browser/ (a CI artefact, ignored by git).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { apiClient } from '@platform/test-kit';
import { STOCKED_PRODUCTS, gatewayUrl } from './stack';
import { useContract } from './contract';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const screenshots = path.resolve(__dirname, '../../../dist/artifacts/browser');
const call = apiClient(() => gatewayUrl, useContract(__filename).onResponse);

let browser: Browser;
let context: BrowserContext;
/** Requests the pages tried to send anywhere but this machine. */
const outside: string[] = [];
/** Console errors and refused resources (a Content-Security-Policy violation shows here). */
const pageErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    // Root in a container has no user namespaces for the sandbox; every name resolves to nothing.
    args: ['--no-sandbox', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1', '--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication'],
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route('**/*', (route) => {
    const { hostname } = new URL(route.request().url());
    if (hostname === '127.0.0.1') return route.continue();
    outside.push(route.request().url());
    return route.abort('blockedbyclient');
  });
});

afterAll(async () => {
  await browser?.close();
});

/** A Content-Security-Policy refusal of an address on another host: the policy doing its work. */
function refusedOutsideThisOrigin(error: string): boolean {
  const refused = /^Loading the \w+ '([^']+)' violates the following Content Security Policy directive/.exec(error)?.[1];
  return refused !== undefined && new URL(refused).hostname !== '127.0.0.1';
}

async function openPage(url: string) {
  const page = await context.newPage();
  page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(url, { waitUntil: 'load' });
  return page;
}

it('shows the API reference at /docs, with its operations, from this origin only', async () => {
  const page = await openPage(`${gatewayUrl}/docs`);
  // Redoc lists every operation by its summary in the side menu, under its tag.
  const menu = page.locator('[role=menu] li');
  await menu.filter({ hasText: 'Place an order' }).first().waitFor({ timeout: 30_000 });
  for (const summary of ['List orders', 'Sign up', "Read a product's rating"]) expect(await menu.filter({ hasText: summary }).count()).toBeGreaterThan(0);
  await page.screenshot({ path: path.join(screenshots, 'docs.png') });
  expect(outside).toEqual([]);
  // Redoc's side menu links its vendor's logo from a CDN: the page's policy refuses it inside the browser.
  expect(pageErrors.filter((error) => !refusedOutsideThisOrigin(error))).toEqual([]);
  await page.close();
});

it('runs a query in GraphiQL with a token in its Headers tab and shows the result', async () => {
  const email = `browser-${Date.now()}@example.com`;
  expect((await call('POST', '/v1/users', { body: { name: 'Browser Buyer', email, password: 'browser-password-1' } })).status).toBe(201);
  const token = (await call('POST', '/v1/tokens', { body: { email, password: 'browser-password-1' } })).body.accessToken as string;
  const productId = (await call('GET', STOCKED_PRODUCTS, { token })).body.items[0].id as string;
  const order = await call('POST', '/v1/orders', { token, body: { items: [{ productId, quantity: 1 }] } });
  expect(order.status).toBe(201);

  // What a person typed earlier, as GraphiQL keeps it in the browser (its Headers and editor tabs).
  // GraphiQL must not depend on the policy refusing anything: no console error at all.
  pageErrors.length = 0;
  await context.addInitScript(
    ([headers, query]) => {
      // Runs in the page, where localStorage exists (this file is typed for Node).
      const { localStorage } = globalThis as unknown as { localStorage: { setItem(key: string, value: string): void } };
      localStorage.setItem('graphiql:headers', headers);
      localStorage.setItem('graphiql:query', query);
    },
    [JSON.stringify({ Authorization: `Bearer ${token}` }), '{ orders(first: 5) { id amount user { name } } }'],
  );
  const page = await openPage(`${gatewayUrl}/v1/graphql`);
  await page.locator('.graphiql-execute-button').click({ timeout: 30_000 });
  const result = page.locator('.graphiql-response');
  await result.getByText(order.body.id as string).waitFor({ timeout: 30_000 });
  expect(await result.innerText()).toContain('Browser Buyer');
  await page.screenshot({ path: path.join(screenshots, 'graphiql.png') });
  expect([outside, pageErrors]).toEqual([[], []]);
  await page.close();
});
