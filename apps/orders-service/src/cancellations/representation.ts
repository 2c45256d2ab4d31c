// The public shape of a cancellation: the schema the OpenAPI document publishes and its mapper.
import { component } from '@platform/endpoints';
import { idField, z } from '@platform/validation';
import type { CancellationRow } from './repository';

export const cancellationRepresentation = component('Cancellation', z.object({
  id: idField(),
  orderId: idField(),
  status: z.enum(['REQUESTED', 'COMPLETED']),
  reason: z.string().nullable(),
  refundAmount: z.number().int().min(0).meta({ description: 'In the smallest unit of the order\'s currency.' }),
  createdAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullable(),
}));

export type CancellationResponse = z.infer<typeof cancellationRepresentation>;

export function toCancellationResponse(row: CancellationRow): CancellationResponse {
  return {
    id: row.id,
    orderId: row.orderId,
    status: row.status,
    reason: row.reason,
    refundAmount: row.refundAmount,
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
  };
}
