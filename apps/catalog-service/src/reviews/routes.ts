// HTTP in and out for reviews of a product: each endpoint declared once, its handler beside it.
import { defineEndpoints, publicPath } from '@platform/endpoints';
import { mapListItems } from '@platform/paging';
import { resourceId } from '@platform/validation';
import { reviewPageRepresentation, reviewRepresentation, toReviewResponse } from './representation';
import { createReviewBody, listReviewsQuery, reviewSortFields } from './schemas';
import { productInPath } from '../products/schemas';
import type { ReviewService } from './service';

export const reviewEndpoints = defineEndpoints('catalog', {
  listProductReviews: {
    method: 'GET', path: '/products/:id/reviews', summary: "List a product's reviews", access: 'signed-in', scope: 'products',
    params: { id: productInPath },
    query: listReviewsQuery, sortFields: reviewSortFields,
    responses: { 200: { description: 'A page of reviews', body: reviewPageRepresentation } },
  },
  createProductReview: {
    method: 'POST', path: '/products/:id/reviews', summary: 'Review a product (once per user)', access: 'signed-in', scope: 'products',
    params: { id: productInPath },
    body: createReviewBody, conflicts: ['REVIEW_EXISTS'],
    responses: { 201: { description: 'The review', body: reviewRepresentation, headers: ['Location'] } },
  },
  getProductReview: {
    method: 'GET', path: '/products/:id/reviews/:reviewId', summary: 'Read a review', access: 'signed-in', scope: 'products',
    params: { id: resourceId('Review'), reviewId: resourceId('Review') },
    responses: { 200: { description: 'The review', body: reviewRepresentation } },
  },
});

export function reviewsRoutes(reviews: ReviewService) {
  return reviewEndpoints.routes({
    listProductReviews: async ({ params, query, res }) => {
      res.json(mapListItems(await reviews.list(params.id, query), toReviewResponse));
    },
    createProductReview: async ({ principal, params, body, res }) => {
      const review = await reviews.create(principal, params.id, body);
      res.status(201).location(publicPath('products', review.productId, 'reviews', review.id)).json(toReviewResponse(review));
    },
    getProductReview: async ({ params, res }) => {
      res.json(toReviewResponse(await reviews.get(params.id, params.reviewId)));
    },
  });
}
