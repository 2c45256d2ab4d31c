// HTTP in and out for reviews of a product.
import { Router } from 'express';
import { principalOf } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { mapListItems } from '@platform/paging';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import { toReviewResponse } from './representation';
import { createReviewBody, listReviewsQuery } from './schemas';
import type { ReviewService } from './service';

export function reviewsRoutes(reviews: ReviewService): Router {
  const router = Router();

  router
    .route('/products/:id/reviews')
    .get(async (req, res) => {
      res.json(mapListItems(await reviews.list(req.params.id as string, parseQuery(listReviewsQuery, req.query)), toReviewResponse));
    })
    .post(async (req, res) => {
      const review = await reviews.create(principalOf(res), req.params.id as string, parseBody(createReviewBody, req.body));
      res.status(201).location(`/v1/products/${review.productId}/reviews/${review.id}`).json(toReviewResponse(review));
    })
    .all(methodNotAllowed);

  router
    .route('/products/:id/reviews/:reviewId')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      res.json(toReviewResponse(await reviews.get(req.params.id as string, req.params.reviewId as string)));
    })
    .all(methodNotAllowed);

  return router;
}
