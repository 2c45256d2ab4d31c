import express from 'express';
import { GraphQLError } from 'graphql';
import { issueAccessToken, TokenVerifier } from '@platform/auth';
import { ApiError, errorHandler } from '@platform/errors';
import { listen } from '@platform/service-kit';
import { createSubgraphMiddleware, gql, requirePrincipal, type SubgraphContext } from './index';

const secret = 'graphql-kit-test-secret-graphql-kit-test';

describe('requirePrincipal', () => {
  it('requires a principal', () => {
    expect(() => requirePrincipal({})).toThrow(GraphQLError);
  });
});

describe('createSubgraphMiddleware', () => {
  it('verifies the forwarded token and renders errors with path and code only', async () => {
    const typeDefs = gql`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query {
        whoami: String
        explode: String
        missing: String
        invalid: String
      }
    `;
    const resolvers = {
      Query: {
        whoami: (_: unknown, __: unknown, context: SubgraphContext) => requirePrincipal(context).userId,
        explode: () => {
          throw new Error('SELECT secret FROM internals');
        },
        missing: () => {
          throw ApiError.notFound('Order');
        },
        invalid: () => {
          throw new ApiError('VALIDATION_FAILED', 'Some fields break a rule.', { fieldErrors: [{ field: 'input.rating', code: 'OUT_OF_RANGE', message: 'input.rating must be at most 5.' }] });
        },
      },
    };
    const middleware = createSubgraphMiddleware({ typeDefs, resolvers, verifier: new TokenVerifier(secret), introspection: false });
    const app = express().use(express.json()).use('/graphql', middleware).use(errorHandler);
    const server = await listen(app, 0, '127.0.0.1');
    try {
      const { accessToken } = await issueAccessToken(secret, { userId: 'u-1', role: 'customer' });
      const ask = async (query: string, token?: string) => {
        const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify({ query }) });
        return { status: res.status, body: (await res.json()) as { data?: Record<string, unknown>; errors?: { message: string; path?: string[]; extensions?: { code?: string } }[] } };
      };
      expect((await ask('{ whoami }', accessToken)).body).toEqual({ data: { whoami: 'u-1' } });
      // Without a valid token nothing of the graph answers, not even its SDL.
      for (const [query, token] of [['{ whoami }', undefined], ['{ _service { sdl } }', undefined], ['{ _service { sdl } }', 'not-a-token']] as const) {
        const refused = await ask(query, token);
        expect([refused.status, (refused.body as { code?: string }).code]).toEqual([401, 'UNAUTHENTICATED']);
      }
      const exploded = await ask('{ explode }', accessToken);
      expect(exploded.body.errors).toEqual([{ message: 'An unexpected error occurred.', path: ['explode'], extensions: { code: 'INTERNAL' } }]);
      // A resolver throws the service's ApiError as it is; the client gets its REST code and field list.
      expect((await ask('{ missing }', accessToken)).body).toEqual({ data: { missing: null }, errors: [{ message: 'Order not found.', path: ['missing'], extensions: { code: 'NOT_FOUND' } }] });
      expect((await ask('{ invalid }', accessToken)).body.errors).toEqual([
        { message: 'Some fields break a rule.', path: ['invalid'], extensions: { code: 'VALIDATION_FAILED', errors: [{ field: 'input.rating', code: 'OUT_OF_RANGE', message: 'input.rating must be at most 5.' }] } },
      ]);
    } finally {
      await server.close();
    }
  });

  it('says what is wrong with an operationName the document lacks (400 GRAPHQL_VALIDATION_FAILED), and codes a syntax error GRAPHQL_PARSE_FAILED', async () => {
    const typeDefs = gql`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query {
        hello: String
      }
    `;
    const middleware = createSubgraphMiddleware({ typeDefs, resolvers: { Query: { hello: () => 'hi' } }, verifier: new TokenVerifier(secret), introspection: false });
    const server = await listen(express().use(express.json()).use('/graphql', middleware).use(errorHandler), 0, '127.0.0.1');
    try {
      const { accessToken } = await issueAccessToken(secret, { userId: 'u-1', role: 'customer' });
      const ask = async (body: Record<string, unknown>) => {
        const res = await fetch(`${server.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', authorization: `Bearer ${accessToken}` }, body: JSON.stringify(body) });
        return [res.status, await res.json()];
      };
      expect(await ask({ query: 'query A { hello }', operationName: 'C' })).toEqual([400, { errors: [{ message: 'operationName "C" names no operation in the document (it defines: A).', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }]);
      expect(await ask({ query: 'query A { hello } query B { hello }' })).toEqual([400, { errors: [{ message: 'The document defines several operations (A, B): name one in operationName.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }]);
      expect(await ask({ query: 'query A { hello } query B { hello }', operationName: 'B' })).toEqual([200, { data: { hello: 'hi' } }]);
      expect(await ask({ query: '{ hello ' })).toEqual([400, { errors: [{ message: 'Syntax Error: Expected Name, found <EOF>.', locations: [{ line: 1, column: 9 }], extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] }]);
    } finally {
      await server.close();
    }
  });
});
