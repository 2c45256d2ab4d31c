// The catalog subgraph: Product entities and Order.reviewCount, batched per request, and reviews
// written through the same ReviewService as REST. Errors are thrown as they are: graphql-kit's
// formatGraphQLError gives a domain error the code REST gives it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import DataLoader from 'dataloader';
import { DateTime, gql, inArgument, requirePrincipal, type SubgraphContext } from '@platform/graphql-kit';
import { parseArgument } from '@platform/validation';
import { toProductResponse, type ProductResponse } from '../products/representation';
import type { ProductService } from '../products/service';
import { createReviewBody } from '../reviews/schemas';
import { toReviewResponse } from '../reviews/representation';
import type { ReviewService } from '../reviews/service';

export const catalogTypeDefs = gql(readFileSync(path.join(__dirname, 'schema.graphql'), 'utf8'));

interface CatalogContext extends SubgraphContext {
  productLoader?: DataLoader<string, ProductResponse | null>;
}

/** One query per request for all the products the gateway asks about. */
function productLoaderOf(context: CatalogContext, products: ProductService) {
  context.productLoader ??= new DataLoader(async (ids: readonly string[]) => {
    const found = await products.getMany(ids);
    return ids.map((id) => {
      const row = found.get(id);
      return row ? toProductResponse(row) : null;
    });
  });
  return context.productLoader;
}

export function catalogResolvers(products: ProductService, reviews: ReviewService) {
  return {
    DateTime,
    Query: {
      product: async (_: unknown, args: { id: string }, context: CatalogContext) => {
        requirePrincipal(context);
        return toProductResponse(await products.get(args.id));
      },
    },
    Mutation: {
      createReview: async (_: unknown, args: { productId: string; input: unknown }, context: CatalogContext) => {
        const principal = requirePrincipal(context);
        const review = await reviews.create(principal, args.productId, parseArgument(createReviewBody, args.input, 'input')).catch(inArgument('input'));
        return toReviewResponse(review);
      },
    },
    Review: {
      product: (review: { productId: string }, _: unknown, context: CatalogContext) => productLoaderOf(context, products).load(review.productId),
    },
    Product: {
      averageRating: (product: ProductResponse) => product.rating,
      __resolveReference: (reference: { id: string }, context: CatalogContext) => {
        requirePrincipal(context);
        return productLoaderOf(context, products).load(reference.id);
      },
    },
    Order: {
      product: (order: { productId?: string | null }, _: unknown, context: CatalogContext) => {
        requirePrincipal(context);
        return order.productId ? productLoaderOf(context, products).load(order.productId) : null;
      },
      reviewCount: async (order: { productId?: string | null }, _: unknown, context: CatalogContext) => {
        requirePrincipal(context);
        if (!order.productId) return 0;
        const product = await productLoaderOf(context, products).load(order.productId);
        return product?.reviewCount ?? 0;
      },
    },
  };
}
