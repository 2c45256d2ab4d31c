// A group of endpoints, declared as a service team writes them, served through the services'
// real pipeline (service-kit createService): what a client sees at each declared check.
import { issueAccessToken, TokenVerifier } from '@platform/auth';
import { createLogger, createMetrics, createService, Health, listen, type Listening } from '@platform/service-kit';
import { resourceId, resourceKey, z } from '@platform/validation';
import { component, componentNameOf, defineEndpoints, gatewayRoutesOf, publicPath } from './index';

const SECRET = 'endpoints-test-secret-endpoints-test-secret';
const note = component('EndpointsTestNote', z.object({ id: z.string(), text: z.string() }));

const notes = defineEndpoints('catalog', {
  createNote: {
    method: 'POST', path: '/notes', summary: 'Write a note', access: 'public',
    body: z.strictObject({ text: z.string().min(1).max(10) }),
    responses: { 201: { description: 'The note', body: note, headers: ['Location'] } },
  },
  listNotes: {
    method: 'GET', path: '/notes', summary: 'List notes', access: 'signed-in', scope: 'products',
    query: z.strictObject({ q: z.string().max(5).optional() }),
    responses: { 200: { description: 'The notes', body: note } },
  },
  replaceNote: {
    method: 'PUT', path: '/notes/:id', summary: 'Replace a note (admin)', access: 'admin', scope: 'products',
    params: { id: resourceKey(z.string().regex(/^\d+$/), 'Note') },
    body: z.strictObject({ text: z.string() }), ifMatch: true,
    responses: { 200: { description: 'The note', body: note } },
  },
});

// Ids that are UUIDs, as the services' are: a path naming none is answered before the handler runs.
const authors = defineEndpoints('catalog', {
  getNoteAuthor: {
    method: 'GET', path: '/notes/:id/authors/:authorId', summary: "Read a note's author", access: 'signed-in', scope: 'products',
    params: { id: resourceId('Note'), authorId: resourceId('Author') },
    responses: { 200: { description: 'The author', body: note } },
  },
});
const handled: string[] = [];

let server: Listening;
let customer: string;
let admin: string;

beforeAll(async () => {
  const app = createService({
    logger: createLogger('endpoints-test', 'silent'),
    health: new Health(),
    metrics: createMetrics('endpoints-test'),
    requestTimeoutMs: 10_000,
    graphql: (_req, res) => void res.json({}),
    internal: [],
    verifier: new TokenVerifier([SECRET]),
    resources: [
      notes.routes({
        createNote: ({ body, principal, res }) => void res.status(201).location(publicPath('notes', 'n 1')).json({ id: 'n1', text: body.text, caller: principal ?? null }),
        listNotes: ({ query, principal, res }) => void res.json({ q: query.q ?? null, caller: principal.userId }),
        replaceNote: ({ params, body, expectedVersion, res }) => void res.json({ id: params.id, text: body.text, expectedVersion: expectedVersion ?? null }),
      }),
      authors.routes({
        getNoteAuthor: ({ params, res }) => {
          handled.push(`${params.id} ${params.authorId}`);
          res.json({ id: params.id, author: params.authorId });
        },
      }),
    ],
    outages: [],
  });
  server = await listen(app, 0, '127.0.0.1');
  customer = (await issueAccessToken(SECRET, { userId: 'u-customer', role: 'customer' })).accessToken;
  admin = (await issueAccessToken(SECRET, { userId: 'u-admin', role: 'admin' })).accessToken;
});

afterAll(() => server.close());

async function json(method: string, path: string, init: { token?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

describe('an endpoint group served by a service', () => {
  it('serves a public endpoint without a token, its body checked, and writes Location under the version prefix', async () => {
    const created = await json('POST', '/notes', { body: { text: 'hello' } });
    expect([created.status, created.headers.get('location'), created.body]).toEqual([201, '/v1/notes/n%201', { id: 'n1', text: 'hello', caller: null }]);
    const unknownField = await json('POST', '/notes', { body: { text: 'hi', extra: 1 } });
    expect([unknownField.status, unknownField.body.errors]).toEqual([400, [expect.objectContaining({ field: 'extra', code: 'UNKNOWN_FIELD' })]]);
    const tooLong = await json('POST', '/notes', { body: { text: 'far too long a note' } });
    expect([tooLong.status, tooLong.body.errors[0].code]).toEqual([422, 'TOO_LONG']);
  });

  it('refuses a query parameter on an endpoint that declares none: a misspelt `?dryRun=true` is not acted on', async () => {
    handled.length = 0;
    const dryRun = await json('POST', '/notes?dryRun=true', { body: { text: 'hello' } });
    expect([dryRun.status, dryRun.body.code, dryRun.body.errors]).toEqual([400, 'VALIDATION_FAILED', [expect.objectContaining({ field: 'dryRun', code: 'UNKNOWN_PARAMETER' })]]);
    const author = await json('GET', '/notes/01890a5d-ac96-774b-bcce-b302099a8057/authors/01890a5d-ac96-774b-bcce-b302099a8058?expand=1', { token: customer });
    expect([author.status, author.body.errors]).toEqual([400, [expect.objectContaining({ field: 'expand', code: 'UNKNOWN_PARAMETER' })]]);
    expect(handled).toEqual([]);
  });

  it('needs a token for a signed-in endpoint on the same path, and checks its query', async () => {
    expect((await json('GET', '/notes')).status).toBe(401);
    expect(await json('GET', '/notes?q=abc', { token: customer })).toMatchObject({ status: 200, body: { q: 'abc', caller: 'u-customer' } });
    const unknown = await json('GET', '/notes?page=2', { token: customer });
    expect([unknown.status, unknown.body.errors]).toEqual([400, [expect.objectContaining({ field: 'page', code: 'UNKNOWN_PARAMETER' })]]);
  });

  it("refuses an admin endpoint to a customer (403), and hands the admin's If-Match version to the handler (412 when malformed)", async () => {
    expect((await json('PUT', '/notes/7', { token: customer, body: { text: 'x' } })).status).toBe(403);
    expect(await json('PUT', '/notes/7', { token: admin, body: { text: 'x' }, headers: { 'if-match': '"3"' } })).toMatchObject({ status: 200, body: { id: '7', text: 'x', expectedVersion: 3 } });
    expect((await json('PUT', '/notes/7', { token: admin, body: { text: 'x' }, headers: { 'if-match': 'three' } })).status).toBe(412);
  });

  it('answers 405 with every method the path has, public and not', async () => {
    const res = await json('DELETE', '/notes', { token: customer });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET, POST, HEAD']);
    const other = await json('DELETE', '/notes/7', { token: customer });
    expect([other.status, other.headers.get('allow')]).toEqual([405, 'PUT']);
  });

  it("routes a path by its exact case, as the gateway does: `/Notes` is no route, not the `/notes` one", async () => {
    // The gateway's route table is case-sensitive; a service that folded case would answer a path
    // the gateway routed elsewhere (`/orders/Search` as an order id there, the search route here).
    const res = await json('GET', '/Notes', { token: customer });
    expect([res.status, res.body.code]).toEqual([404, 'NOT_FOUND']);
  });
});

describe("the path's parameters, declared with the endpoint", () => {
  const noteId = '01890a5d-ac96-774b-bcce-b302099a8057';
  const authorId = '01890a5d-ac96-774b-bcce-b302099a8058';

  it('answers a path value that names nothing 404 in the error format, as an unknown one, before the handler runs', async () => {
    handled.length = 0;
    const malformed = await json('GET', `/notes/${noteId}/authors/not-an-id`, { token: customer });
    expect([malformed.status, malformed.body.code, malformed.body.message, malformed.body.errors]).toEqual([404, 'NOT_FOUND', 'Author not found.', []]);
    expect((await json('GET', `/notes/nonsense/authors/${authorId}`, { token: customer })).body.message).toBe('Note not found.');
    expect(handled).toEqual([]);
    expect(await json('GET', `/notes/${noteId}/authors/${authorId}`, { token: customer })).toMatchObject({ status: 200, body: { id: noteId, author: authorId } });
    expect(handled).toEqual([`${noteId} ${authorId}`]);
  });

  it("checks the path after the request's other parts: an unreadable body is still its 400 on a path that names nothing", async () => {
    expect(await json('PUT', '/notes/seven', { token: admin, body: { text: 'x' } })).toMatchObject({ status: 404, body: { code: 'NOT_FOUND', message: 'Note not found.' } });
    expect((await json('PUT', '/notes/seven', { token: admin, body: { text: 7 } })).status).toBe(400);
  });

  it("refuses a declaration whose params are not its path's parameters, in their order", () => {
    const declare = (path: string, params?: Record<string, ReturnType<typeof resourceId>>) =>
      () => defineEndpoints('catalog', { readThing: { method: 'GET', path, summary: 'Read a thing', access: 'public', ...(params ? { params } : {}), responses: { 200: { description: 'The thing' } } } });
    expect(declare('/things/:id')).toThrow('readThing: params must declare id (the parameters of /things/:id, in order); it declares none');
    expect(declare('/things/:id', { thingId: resourceId('Thing') })).toThrow('it declares thingId');
    expect(declare('/things/:id/parts/:partId', { partId: resourceId('Part'), id: resourceId('Thing') })).toThrow('must declare id, partId');
    expect(declare('/things', { id: resourceId('Thing') })).toThrow('params must declare nothing');
    expect(declare('/things/:id', { id: resourceId('Thing') })).not.toThrow();
  });
});

describe('what the declarations give the gateway and the document', () => {
  it('one gateway row per path and shared settings, with operation ids from the keys', () => {
    expect(notes.endpoints.map((endpoint) => endpoint.operationId)).toEqual(['createNote', 'listNotes', 'replaceNote']);
    expect(gatewayRoutesOf(notes.endpoints)).toEqual([
      { pattern: '/notes', methods: ['POST'], upstream: 'catalog', auth: 'public' },
      { pattern: '/notes', methods: ['GET'], upstream: 'catalog', resource: 'products' },
      { pattern: '/notes/:id', methods: ['PUT'], upstream: 'catalog', resource: 'products' },
    ]);
  });

  it('names a representation once; a second schema under the same name is refused', () => {
    expect(componentNameOf(note)).toBe('EndpointsTestNote');
    expect(() => component('EndpointsTestNote', z.object({}))).toThrow('Two schemas are named EndpointsTestNote');
  });
});
