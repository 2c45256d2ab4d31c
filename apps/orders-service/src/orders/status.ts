// The order state machine, in one table: which status may follow which.
// PENDING → CONFIRMED → SHIPPED → DELIVERED; CANCELED from PENDING or CONFIRMED.
import { Conflict } from '@platform/errors';
import { updateAtVersion } from '@platform/service-kit';

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
  if (to === 'CANCELED' && from === 'CANCELED') throw alreadyCanceled();
  if (to === 'CANCELED') throw new Conflict('ORDER_NOT_CANCELABLE', `The order is ${from}: shipping has begun, so it can no longer be canceled.`);
  throw new Conflict('CONFLICT', `An order cannot move from ${from} to ${to}.`);
}


function alreadyCanceled(): Conflict {
  return new Conflict('ORDER_ALREADY_CANCELED', 'The order is already canceled.');
}

/**
 * service-kit's updateAtVersion for an order. A write that lost its race to a cancellation says
 * so (ORDER_ALREADY_CANCELED): more use to a client than "it changed".
 */
export function updateOrderAtVersion<T>(
  orders: { statusOf(id: string): Promise<OrderStatus | undefined> },
  order: { id: string; version: number },
  expectedVersion: number | undefined,
  write: (version: number) => Promise<T | null>,
): Promise<T> {
  return updateAtVersion('order', order.version, expectedVersion, write, {
    explainLostRace: async () => ((await orders.statusOf(order.id)) === 'CANCELED' ? alreadyCanceled() : undefined),
  });
}
