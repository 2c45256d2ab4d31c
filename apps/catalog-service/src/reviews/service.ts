// Rules of reviews: any signed-in user reviews a product once; everyone signed in reads them.
import type { Principal } from '@platform/auth';
import { Conflict, NotFound } from '@platform/errors';
import { domainEvent } from '@platform/events';
import { newId } from '@platform/ids';
import { type ListEnvelope, parseSort, toListEnvelope, toPageRequest } from '@platform/paging';
import type { ProductService } from '../products/service';
import { whenUniqueViolated } from '@platform/db';
import type { ReviewRepository, ReviewRow } from './repository';
import { type CreateReviewInput, type ListReviewsQuery, reviewSortFields } from './schemas';

export class ReviewService {
  constructor(
    private readonly reviews: ReviewRepository,
    private readonly products: ProductService,
    private readonly cursorSecret: string,
  ) {}

  async create(principal: Principal, productId: string, input: CreateReviewInput): Promise<ReviewRow> {
    const product = await this.products.get(productId);
    return whenUniqueViolated(
      this.reviews.createAndRate({ id: newId(), productId: product.id, userId: principal.userId, rating: input.rating, title: input.title ?? null, body: input.body ?? null }, (review) =>
        domainEvent('review.created', review.id, { id: review.id, productId: review.productId, userId: principal.userId, rating: review.rating }),
      ),
      () => new Conflict('REVIEW_EXISTS', 'You have already reviewed this product.'),
    );
  }

  /** The review, its ids as GET /products/{id}/reviews/{reviewId} checked them (ids that are no UUIDs were answered 404 there). */
  async get(productId: string, reviewId: string): Promise<ReviewRow> {
    const review = await this.reviews.findById(productId, reviewId);
    if (!review) throw NotFound.of('Review');
    return review;
  }

  async list(productId: string, query: ListReviewsQuery): Promise<ListEnvelope<ReviewRow>> {
    const product = await this.products.get(productId);
    const { sort: sortParam, ...paging } = query;
    const sort = parseSort(sortParam, reviewSortFields, { field: 'createdAt', direction: 'desc' });
    const page = toPageRequest(paging, { list: `reviews:${product.id}`, sort, secret: this.cursorSecret });
    const { rows, total } = await this.reviews.listByProduct(product.id, page);
    return toListEnvelope(rows, page, { secret: this.cursorSecret, sortValue: (row) => row.createdAt, totalCount: total });
  }
}
