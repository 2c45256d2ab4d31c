// REST and the catalog subgraph answer a product and a review from the same mappers
// (products/representation.ts, reviews/representation.ts). This holds them to one field list, as
// orders' answers.test.ts does: every field of a representation (or request body) is in
// schema.graphql under its name unless declared REST-only below (with why), every field of the SDL
// comes from it unless declared graph-only (with what answers it), and the subgraph answers each
// shared field with REST's value, never a silent null. Not here: `Order` (orders' entity, which the
// catalog only extends) and REST's `Rating` (no graph type: the graph's Product carries its
// average and count).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'graphql';
import type { Database } from '@platform/db';
import { openTestDatabase } from '@platform/db/testing';
import { createLogger, createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { apiClient, expectedFields, type FieldDifferences, sdlFields, tokenFor } from '@platform/test-kit';
import { createCatalogApp } from '../app';
import { PrismaClient } from '../generated/prisma/client';
import { productRepresentation } from '../products/representation';
import { reviewRepresentation } from '../reviews/representation';
import { createReviewBody } from '../reviews/schemas';

/** The differences between REST's and the graph's catalog, each with why. */
const declared = {
  Product: {
    restOnly: {
      description: 'never in the graph: its Product carries what order and review pages show, not the long text',
      createdAt: 'never in the graph: no client operation shows or sorts products by age (REST sort=createdAt)',
    },
    graphOnly: { averageRating: 'Product.averageRating resolves the representation’s rating (its clearer name; rating is deprecated)' },
  },
  Review: {
    restOnly: { productId: 'the graph links the product instead (product)' },
    graphOnly: { product: 'Review.product resolves the representation’s productId to the Product' },
  },
  CreateReviewInput: { restOnly: {}, graphOnly: {} },
} as const satisfies Record<string, FieldDifferences>;

const sdl = parse(readFileSync(path.join(__dirname, 'schema.graphql'), 'utf8'));

describe('one field list for REST and GraphQL', () => {
  it.each([
    ['Product', productRepresentation, declared.Product],
    ['Review', reviewRepresentation, declared.Review],
    ['CreateReviewInput', createReviewBody, declared.CreateReviewInput],
  ] as const)('schema.graphql %s has the representation’s fields, but for the declared differences', (typeName, shape, differences) => {
    expect(sdlFields(sdl, typeName)).toEqual(expectedFields(shape, differences));
  });
});

describe('the subgraph answers what REST answers', () => {
  const JWT_SECRET = 'catalog-answers-secret-catalog-answers-01';
  let database: Database<PrismaClient>;
  let server: Listening;
  const call = apiClient(() => server.url);

  beforeAll(async () => {
    database = await openTestDatabase({ service: 'catalog_answers', migrationsDir: path.join(__dirname, '../../prisma/migrations'), createClient: (adapter) => new PrismaClient({ adapter }) });
    const built = await createCatalogApp({
      config: { jwtVerifySecrets: [JWT_SECRET], cursorSecret: 'catalog-answers-cursor-secret', REQUEST_TIMEOUT_MS: 10_000, NODE_ENV: 'test' },
      prisma: database.prisma,
      logger: createLogger('catalog-answers-test', 'silent'),
      health: new Health(),
      metrics: createMetrics('catalog-answers-test'),
    });
    server = await listen(built.app, 0, '127.0.0.1');
  });

  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  // Every leaf the SDL declares, so a field added to the SDL is asked for here without editing this test.
  const shared = (typeName: 'Product' | 'Review') => sdlFields(sdl, typeName).filter((field) => !(field in declared[typeName].graphOnly));
  const pick = (from: Record<string, unknown>, fields: string[]) => Object.fromEntries(fields.map((field) => [field, from[field]]));

  it('for every field the SDL shares with the representations: the same value (a field the resolvers lost would be null)', async () => {
    const admin = await tokenFor(JWT_SECRET, 'admin');
    const alice = await tokenFor(JWT_SECRET);
    const created = await call('POST', '/products', { token: admin.token, body: { sku: 'ANSWER-LAMP-1', name: 'Answer Lamp', description: 'Lights one field list.', imageUrl: 'https://img.example.com/lamp.png', price: 2_500, currency: 'EUR' } });
    expect(created.status).toBe(201);
    const productId = created.body.id as string;

    // A review written through the graph, read back through REST.
    const review = await call('POST', '/graphql', {
      token: alice.token,
      body: { query: `mutation($productId: ID!, $input: CreateReviewInput!) { createReview(productId: $productId, input: $input) { ${shared('Review').join(' ')} product { id } } }`, variables: { productId, input: { rating: 4, title: 'Bright', body: 'Lights the desk.' } } },
    });
    expect(review.body.errors).toBeUndefined();
    const graphReview = review.body.data.createReview;
    const restReview = (await call('GET', `/products/${productId}/reviews/${graphReview.id}`, { token: alice.token })).body;
    expect(pick(graphReview, shared('Review'))).toEqual(pick(restReview, shared('Review')));
    expect([graphReview.product, restReview.userId, restReview.rating]).toEqual([{ id: productId }, alice.userId, 4]);

    // The product, reviewed (so its rating and count are not the defaults), through product(id) and
    // through the reference the gateway resolves for Order.product and Review.product.
    const rest = (await call('GET', `/products/${productId}`, { token: alice.token })).body;
    const fields = `${shared('Product').join(' ')} averageRating`;
    const graph = await call('POST', '/graphql', {
      token: alice.token,
      body: { query: `query($id: ID!, $r: [_Any!]!) { product(id: $id) { ${fields} } _entities(representations: $r) { ... on Product { ${fields} } } }`, variables: { id: productId, r: [{ __typename: 'Product', id: productId }] } },
    });
    expect(graph.body.errors).toBeUndefined();
    const { product, _entities: [reference] } = graph.body.data;
    expect(pick(product, shared('Product'))).toEqual(pick(rest, shared('Product')));
    expect(pick(reference, shared('Product'))).toEqual(pick(rest, shared('Product')));
    // The graph's own part, from the representation's rating.
    expect([product.averageRating, reference.averageRating, rest.rating, rest.reviewCount]).toEqual([4, 4, 4, 1]);
  });
});
