// The order state machine, in one table: which status may follow which.
// PENDING → CONFIRMED → SHIPPED → DELIVERED; CANCELED from PENDING or CONFIRMED.
import { ApiError } from '@platform/errors';

export const orderStatuses = ['PENDING', 'CONFIRMED', 'SHIPPED', 'DELIVERED', 'CANCELED'] as const;
export type OrderStatus = (typeof orderStatuses)[number];

export const allowedTransitions: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  PENDING: ['CONFIRMED', 'CANCELED'],
  CONFIRMED: ['SHIPPED', 'CANCELED'],
  SHIPPED: ['DELIVERED'],
  DELIVERED: [],
  CANCELED: [],
};

export function canTransition(from: OrderStatus, to: OrderStatus): boolean {
  return allowedTransitions[from].includes(to);
}

/** Throws the 409 a client sees for a move the table does not allow. */
export function assertTransition(from: OrderStatus, to: OrderStatus): void {
  if (canTransition(from, to)) return;
  if (to === 'CANCELED' && from === 'CANCELED') throw new ApiError('ORDER_ALREADY_CANCELED', 'The order is already canceled.');
  if (to === 'CANCELED') throw new ApiError('ORDER_NOT_CANCELABLE', `The order is ${from}: shipping has begun, so it can no longer be canceled.`);
  throw new ApiError('CONFLICT', `An order cannot move from ${from} to ${to}.`);
}


/** Why a write lost its race when the winner canceled the order: more use to a client than "it changed". */
export function canceledMeanwhile(statusNow: OrderStatus | undefined): ApiError | undefined {
  return statusNow === 'CANCELED' ? new ApiError('ORDER_ALREADY_CANCELED', 'The order is already canceled.') : undefined;
}
