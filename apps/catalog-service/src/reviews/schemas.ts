import { pagingQueryShape } from '@platform/paging';
import { z } from '@platform/validation';

export const createReviewBody = z.strictObject({
  rating: z.number().int().min(1).max(5),
  title: z.string().trim().min(1).max(200).nullable().optional(),
  body: z.string().trim().min(1).max(5000).nullable().optional(),
});

export const reviewSortFields = ['createdAt'] as const;

export const listReviewsQuery = z.strictObject({ ...pagingQueryShape });

export type CreateReviewInput = z.output<typeof createReviewBody>;
export type ListReviewsQuery = z.output<typeof listReviewsQuery>;
