// REST and the users subgraph answer a user from one mapper (users/representation.ts), and
// updateMe takes PATCH /users/me's body. This holds them to one field list, as orders'
// answers.test.ts does: every field of the representation (or request body) is in schema.graphql
// under its name unless declared REST-only below (with why), every field of the SDL comes from it
// unless declared graph-only (with what answers it), and the subgraph answers each shared field
// with REST's value, never a silent null.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'graphql';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { createLogger, createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { apiClient, expectedFields, type FieldDifferences, sdlFields } from '@platform/test-kit';
import { createUsersApp } from '../app';
import { PrismaClient } from '../generated/prisma/client';
import { userRepresentation } from '../users/representation';
import { patchUserBody } from '../users/schemas';

/** The differences between REST's and the graph's user, each with why. */
const declared = {
  User: {
    restOnly: {
      role: 'never in the graph: its User is the profile a customer reads and edits (me, updateMe); the role is in REST’s answer and the token',
      createdAt: 'never in the graph: account metadata, for REST’s admin list (sort, createdFrom/createdTo)',
      lastLoginAt: 'never in the graph: account metadata, for REST’s admin list',
    },
    graphOnly: {},
  },
  Address: { restOnly: {}, graphOnly: {} },
  AddressInput: { restOnly: {}, graphOnly: {} },
  UpdateMeInput: {
    restOnly: { password: 'a credential changes only through REST (resolvers.ts: updateMeInput omits it)' },
    graphOnly: {},
  },
} as const satisfies Record<string, FieldDifferences>;

const sdl = parse(readFileSync(path.join(__dirname, 'schema.graphql'), 'utf8'));

describe('one field list for REST and GraphQL', () => {
  it.each([
    ['User', userRepresentation, declared.User],
    ['Address', userRepresentation.shape.address.unwrap(), declared.Address],
    ['AddressInput', patchUserBody.shape.address.unwrap().unwrap(), declared.AddressInput],
    ['UpdateMeInput', patchUserBody, declared.UpdateMeInput],
  ] as const)('schema.graphql %s has the representation’s fields, but for the declared differences', (typeName, shape, differences) => {
    expect(sdlFields(sdl, typeName)).toEqual(expectedFields(shape, differences));
  });
});

describe('the subgraph answers what REST answers', () => {
  const JWT_SECRET = 'users-answers-secret-users-answers-01234';
  let database: Database<PrismaClient>;
  let server: Listening;
  const call = apiClient(() => server.url);

  beforeAll(async () => {
    database = await openTestDatabase({ service: 'users_answers', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
    const built = await createUsersApp({
      config: { jwtSecret: JWT_SECRET, jwtVerifySecrets: [JWT_SECRET], cursorSecret: 'users-answers-cursor-secret', ACCESS_TOKEN_TTL_S: 600, REQUEST_TIMEOUT_MS: 10_000, NODE_ENV: 'test' },
      prisma: database.prisma,
      logger: createLogger('users-answers-test', 'silent'),
      health: new Health(),
      metrics: createMetrics('users-answers-test'),
    });
    server = await listen(built.app, 0, '127.0.0.1');
  });

  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  // Every leaf the SDL declares, so a field added to the SDL is asked for here without editing this test.
  const userFields = () => sdlFields(sdl, 'User').filter((field) => !(field in declared.User.graphOnly));
  const selection = userFields().map((field) => (field === 'address' ? `address { ${sdlFields(sdl, 'Address').join(' ')} }` : field)).join(' ');
  const pick = (from: Record<string, unknown>) => Object.fromEntries(userFields().map((field) => [field, from[field]]));

  it('for every field the SDL shares with the representation: the same value (a field the resolvers lost would be null)', async () => {
    const signedUp = await call('POST', '/users', {
      body: { name: 'Answer Kim', email: 'answer.kim@example.com', password: 'correct-horse-1', phone: '+82 10-1234-5678', address: { zipCode: '06236', line1: 'Teheran-ro 1', line2: '3F' }, nickname: 'ak', marketingAgreed: true },
    });
    expect(signedUp.status).toBe(201);
    const token = (await call('POST', '/tokens', { body: { email: 'answer.kim@example.com', password: 'correct-horse-1' } })).body.accessToken as string;
    const rest = (await call('GET', '/users/me', { token })).body;

    // me, user(id) and the reference the gateway resolves for Order.user.
    const graph = await call('POST', '/graphql', {
      token,
      body: { query: `query($id: ID!, $r: [_Any!]!) { me { ${selection} } user(id: $id) { ${selection} } _entities(representations: $r) { ... on User { ${selection} } } }`, variables: { id: rest.id, r: [{ __typename: 'User', id: rest.id }] } },
    });
    expect(graph.body.errors).toBeUndefined();
    const { me, user, _entities: [reference] } = graph.body.data;
    expect([pick(me), pick(user), pick(reference)]).toEqual([pick(rest), pick(rest), pick(rest)]);
    expect(rest.address).toEqual({ zipCode: '06236', line1: 'Teheran-ro 1', line2: '3F' });

    // A change through the graph, read back through REST.
    const updated = await call('POST', '/graphql', {
      token,
      body: { query: `mutation($input: UpdateMeInput!) { updateMe(input: $input) { ${selection} } }`, variables: { input: { name: 'Answer Lee', nickname: null, address: { zipCode: '04524', line1: 'Sejong-daero 110' }, marketingAgreed: false } } },
    });
    expect(updated.body.errors).toBeUndefined();
    const after = (await call('GET', '/users/me', { token })).body;
    expect(pick(updated.body.data.updateMe)).toEqual(pick(after));
    expect([after.name, after.nickname, after.address, after.marketingAgreed]).toEqual(['Answer Lee', null, { zipCode: '04524', line1: 'Sejong-daero 110', line2: null }, false]);
  });
});
