// The public shape of a review. The schema is what the OpenAPI document publishes; the mapper is
// typed by it, so they agree.
import { idField, z } from '@platform/validation';

export const reviewRepresentation = z.object({
  id: idField(),
  productId: idField(),
  userId: idField(),
  rating: z.number().int().min(1).max(5),
  title: z.string().nullable(),
  body: z.string().nullable(),
  createdAt: z.iso.datetime(),
});

export type ReviewResponse = z.infer<typeof reviewRepresentation>;
