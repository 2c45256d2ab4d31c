import { ApiError } from '@platform/errors';
import { allowedTransitions, assertTransition, canTransition, orderStatuses, type OrderStatus } from './status';

describe('order state machine', () => {
  const expected: Record<OrderStatus, OrderStatus[]> = {
    PENDING: ['CONFIRMED', 'CANCELED'],
    CONFIRMED: ['SHIPPED', 'CANCELED'],
    SHIPPED: ['DELIVERED'],
    DELIVERED: [],
    CANCELED: [],
  };

  it.each(orderStatuses.flatMap((from) => orderStatuses.map((to) => [from, to] as const)))('%s → %s follows the table', (from, to) => {
    const allowed = expected[from].includes(to);
    expect(canTransition(from, to)).toBe(allowed);
    if (allowed) {
      expect(() => assertTransition(from, to)).not.toThrow();
      return;
    }
    let error: ApiError | undefined;
    try {
      assertTransition(from, to);
    } catch (thrown) {
      error = thrown as ApiError;
    }
    expect(error?.status).toBe(409);
    const code = to === 'CANCELED' ? (from === 'CANCELED' ? 'ORDER_ALREADY_CANCELED' : 'ORDER_NOT_CANCELABLE') : 'CONFLICT';
    expect(error?.code).toBe(code);
  });

  it('has exactly the transitions of the contract', () => {
    expect(allowedTransitions).toEqual(expected);
  });
});
