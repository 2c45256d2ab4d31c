// The public shape of a review. The schema is what the OpenAPI document publishes; the mapper is
// typed by it, so they agree.
import { component } from '@platform/endpoints';
import { listEnvelopeSchema } from '@platform/paging';
import { idField, z } from '@platform/validation';
import type { ReviewRow } from './repository';

export const reviewRepresentation = component(
  'Review',
  z.object({
  id: idField(),
  productId: idField(),
  userId: idField().nullable().meta({ description: "The reviewer's id; null once they deleted their account (the review and its rating stay)." }),
  rating: z.number().int().min(1).max(5),
  title: z.string().nullable(),
  body: z.string().nullable(),
  createdAt: z.iso.datetime(),
  }),
);

export const reviewPageRepresentation = component('ReviewPage', listEnvelopeSchema(reviewRepresentation));

export type ReviewResponse = z.infer<typeof reviewRepresentation>;

export function toReviewResponse(row: ReviewRow): ReviewResponse {
  return { id: row.id, productId: row.productId, userId: row.userId, rating: row.rating, title: row.title, body: row.body, createdAt: row.createdAt.toISOString() };
}
