// What the SDK sends for each credential a client gives it.
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
