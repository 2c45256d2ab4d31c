// What the SDK sends for each credential a client gives it, and where.
import { createApiClient } from './index';

async function headersSent(options: Parameters<typeof createApiClient>[1]): Promise<Headers> {
  let sent: Headers | undefined;
  const fetch = async (request: Request) => {
    sent = request.headers;
    return new Response(JSON.stringify({ items: [], nextCursor: null, hasNext: false }), { headers: { 'content-type': 'application/json' } });
  };
  await createApiClient('http://127.0.0.1:1', { ...options, fetch: fetch as typeof globalThis.fetch }).GET('/api-keys');
  if (!sent) throw new Error('nothing was sent');
  return sent;
}

it('sends an API key as X-Api-Key and a token as Authorization: Bearer', async () => {
  const withKey = await headersSent({ apiKey: 'opk_0123' });
  expect([withKey.get('x-api-key'), withKey.get('authorization')]).toEqual(['opk_0123', null]);
  const withToken = await headersSent({ token: 'jwt' });
  expect([withToken.get('x-api-key'), withToken.get('authorization')]).toEqual([null, 'Bearer jwt']);
});

it('refuses a token and an API key together, as the gateway would', () => {
  expect(() => createApiClient('http://127.0.0.1:1', { token: 'jwt', apiKey: 'opk_0123' })).toThrow(/not both/);
});

it("sends a later major's operations to their own path, v1's under /v1, body and headers kept", async () => {
  const sent: [string, string, string | null, string][] = [];
  const fetch = async (request: Request) => {
    sent.push([request.method, new URL(request.url).pathname + new URL(request.url).search, request.headers.get('authorization'), await request.text()]);
    return new Response('{}', { headers: { 'content-type': 'application/json' } });
  };
  const api = createApiClient('http://127.0.0.1:1/api', { token: 'jwt', fetch: fetch as typeof globalThis.fetch });
  // No /v2 operation is published yet: the path is given as a generated client of a v2 document would have it.
  const untyped = api as unknown as { GET(path: string, init?: object): Promise<unknown>; POST(path: string, init?: object): Promise<unknown> };
  await untyped.GET('/v2/products/{id}', { params: { path: { id: 'p1' }, query: { fields: ['id'] } } });
  await untyped.POST('/v2/orders', { body: { items: [] } });
  await api.GET('/products/{id}', { params: { path: { id: 'p1' } } });
  expect(sent).toEqual([
    ['GET', '/api/v2/products/p1?fields=id', 'Bearer jwt', ''],
    ['POST', '/api/v2/orders', 'Bearer jwt', '{"items":[]}'],
    ['GET', '/api/v1/products/p1', 'Bearer jwt', ''],
  ]);
});
