// The fuzz campaign against the whole stack, through the gateway. `npm test` runs a quick seeded
// slice; `npm run fuzz` runs FUZZ_REQUESTS (≥ 20,000) with a new seed and prints one summary line.
// Reproduce a run: FUZZ_SEED=<seed> FUZZ_REQUESTS=<n> npm run fuzz.
import fc from 'fast-check';
import { alive, apiClient, runBounded } from '@platform/test-kit';
import { STOCKED_PRODUCTS, gatewayUrl, stackState } from '../stack';
import { answersIn, emptyTally, type FuzzRequest, type Identities, judge, operationsOf, rawExchange, rawFramings, requestsFor, send, summaryOf } from './fuzz';
import { useContract } from '../contract';

const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 400);
const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const call = apiClient(() => gatewayUrl, useContract(__filename, 'documented').onResponse);
const base = new URL(gatewayUrl);
const tally = emptyTally();
let tokens: Identities;
/** Another customer's id, email and order id: what the fuzzing customer must never read. */
let secrets: string[];
let ids: string[];

async function signUp(name: string) {
  const email = `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const created = await call('POST', '/v1/users', { body: { name, email, password: 'fuzz-password-1' } });
  expect(created.status).toBe(201);
  const token = await call('POST', '/v1/tokens', { body: { email, password: 'fuzz-password-1' } });
  return { id: created.body.id as string, email, token: token.body.accessToken as string };
}

beforeAll(async () => {
  const customer = await signUp('fuzzer');
  const victim = await signUp('victim');
  const products = await call('GET', STOCKED_PRODUCTS, { token: customer.token });
  const productId = products.body.items[0].id as string;
  const mine = await call('POST', '/v1/orders', { token: customer.token, body: { items: [{ productId, quantity: 1 }] } });
  const theirs = await call('POST', '/v1/orders', { token: victim.token, body: { items: [{ productId, quantity: 1 }] } });
  expect([mine.status, theirs.status]).toEqual([201, 201]);
  tokens = { anonymous: undefined, customer: customer.token, admin: stackState().adminToken };
  secrets = [victim.id, victim.email, theirs.body.id];
  ids = [productId, mine.body.id, theirs.body.id, customer.id, victim.id, 'me', mine.body.items[0].id];
});

afterAll(() => {
  process.stdout.write(`\nfuzz: ${summaryOf(tally, SEED)}\nfuzz statuses: ${JSON.stringify(tally.statuses)}\n`);
});

/** A secret counts as leaked only when the caller did not send it itself (a path echoed in a 404 is not a leak). */
const unsent = (request: FuzzRequest) => secrets.filter((secret) => !request.target.includes(encodeURIComponent(secret)) && !request.body?.includes(secret));

it(`answers ${REQUESTS} hostile requests over every operation without a 5xx, an error outside the format, a leak or a crash`, async () => {
  const document = (await call('GET', '/v1/openapi.json')).body;
  const operations = operationsOf(document);
  expect(operations.length).toBeGreaterThan(25);
  // A request that deletes a fuzzing identity or changes its password would leave the rest of the
  // run nothing but 401s for that identity: those are left out (their refusals are tested elsewhere).
  const ownUser = new RegExp(`^/v1/users/(me|${ids.filter((id) => id !== 'me').join('|')})(/|\\?|$)`);
  const endsAnIdentity = (request: FuzzRequest) => request.as !== 'anonymous' && ownUser.test(request.target) && (request.method === 'DELETE' || /password/.test(request.body ?? ''));
  // Nor does the admin write the victim's ids into public data (a stock level named after one is
  // listed to every customer): that would be the fuzz publishing them, not the server leaking them.
  const publishesASecret = (request: FuzzRequest) => request.as === 'admin' && request.method !== 'GET' && request.method !== 'HEAD' && secrets.some((secret) => request.target.includes(encodeURIComponent(secret)) || request.body?.includes(secret));
  const requests = fc
    .sample(requestsFor(operations, ids), { seed: SEED, numRuns: Math.ceil(REQUESTS * 1.1) })
    .filter((request) => !endsAnIdentity(request) && !publishesASecret(request))
    .slice(0, REQUESTS);
  expect(requests).toHaveLength(REQUESTS);
  await runBounded(requests.length, 8, async (index) => {
    const request = requests[index];
    try {
      judge(tally, request, await send(base, request, tokens), unsent(request));
    } catch (error) {
      // The connection was cut without an answer: judged as a crash only if the gateway is gone.
      tally.requests += 1;
      tally.findings.push({ kind: '5xx', request, status: 0, body: String(error) });
      tally.serverErrors += 1;
    }
  });
  for (const [name, pid] of Object.entries(stackState().pids)) {
    if (!alive(pid)) {
      tally.crashes += 1;
      tally.findings.push({ kind: '5xx', request: { method: '-', target: name, headers: {}, as: 'anonymous' }, status: 0, body: `${name} (pid ${pid}) is gone` });
    }
  }
  expect((await call('GET', '/healthz')).status).toBe(200);
  if (tally.findings.length) process.stdout.write(`fuzz findings (first ${tally.findings.length}):\n${tally.findings.map((finding) => JSON.stringify(finding)).join('\n')}\n`);
  expect({ serverErrors: tally.serverErrors, badFormat: tally.badFormat, leaks: tally.leaks, crashes: tally.crashes, insides: tally.insides }).toEqual({ serverErrors: 0, badFormat: 0, leaks: 0, crashes: 0, insides: 0 });
}, 600_000);

it('reads every ambiguous or smuggling framing as one request (or refuses it), and the next client gets its own answer', async () => {
  // Its own customer: the fuzz above may well have deleted its own account.
  const framer = await signUp('framer');
  const paths = ['/v1/users/me', '/v1/orders/01J0000000000000000000000Z', '/v1/tokens'];
  const problems: string[] = [];
  for (const path of paths) {
    for (const framing of rawFramings(base.host, path, framer.token)) {
      const answers = answersIn(await rawExchange(base.hostname, Number(base.port), framing.bytes));
      if (answers.length > 1) problems.push(`${path} ${framing.name}: ${answers.length} answers on one request (${answers.map((answer) => answer.status).join(', ')})`);
      for (const answer of answers) {
        if (answer.status >= 500) problems.push(`${path} ${framing.name}: ${answer.status} ${answer.body.slice(0, 120)}`);
        if (answer.status >= 400 && !/"code":"[A-Z_]+"/.test(answer.body)) problems.push(`${path} ${framing.name}: ${answer.status} outside the error format: ${answer.body.slice(0, 120)}`);
      }
      // The next client on the gateway's pooled upstream connections reads its own answer.
      const me = await call('GET', '/v1/users/me', { token: framer.token });
      if (me.status !== 200 || me.body.id !== framer.id) problems.push(`${path} ${framing.name}: the next request got ${me.status} ${me.text.slice(0, 120)}`);
    }
  }
  expect(problems).toEqual([]);
});
