// The cancellation worker against an order other writes keep changing: it retries, and it stops.
import { createLogger } from '@platform/service-kit';
import type { OrderQueries } from '../orders/queries';
import type { OrderRepository, OrderRow, OrderWrites } from '../orders/repository';
import type { StockReservations } from '../stock/reservations';
import { CANCEL_ATTEMPTS, CancelOrder } from './cancel-order';
import type { CancellationRepository, CancellationRow } from './repository';
import { CancellationService } from './service';

const order = {
  id: '01a20097-b6ee-740a-909d-0000000000aa',
  userId: '01a20097-b6ee-740a-909d-0000000000bb',
  status: 'PENDING',
  version: 1,
  reservationKey: 'reservation-1',
  amount: 100,
  currency: 'KRW',
  couponCode: null,
  items: [],
  createdAt: new Date(),
} as unknown as OrderRow;

/** An order whose versioned writes lose `losses` times (another write always got there first), then win. */
function contendedOrder(losses: number) {
  const attempts: number[] = [];
  const released: string[] = [];
  const recorded: string[] = [];
  const writes = {
    updateAtVersion: async (_id: string, version: number) => {
      attempts.push(version);
      return attempts.length > losses;
    },
    findById: async () => order,
    recordEvent: async (event: { type: string }) => void recorded.push(event.type),
  } as unknown as OrderWrites;
  const orders = { findById: async () => order, unitOfWork: <T>(work: (w: OrderWrites) => Promise<T>) => work(writes) } as unknown as OrderRepository;
  const stock = { release: async (key: string) => void released.push(key), releaseAfterCommit: async () => undefined } as unknown as StockReservations;
  const cancelOrder = new CancelOrder(orders, {} as OrderQueries, stock, createLogger('cancel-test', 'silent'));
  return { cancelOrder, attempts, released, recorded };
}

describe('the cancellation worker canceling an order that keeps changing', () => {
  it(`gives up after ${CANCEL_ATTEMPTS} lost races, writes nothing and releases nothing`, async () => {
    const { cancelOrder, attempts, released, recorded } = contendedOrder(Number.POSITIVE_INFINITY);
    await expect(cancelOrder.forCancellation(order.id)).resolves.toEqual({ outcome: 'contended', canceledAmount: 0 });
    expect(attempts).toHaveLength(CANCEL_ATTEMPTS);
    expect(released).toEqual([]);
    expect(recorded).toEqual([]);
  });

  it('cancels once a retry wins, and gives the stock back once', async () => {
    const { cancelOrder, attempts, released, recorded } = contendedOrder(CANCEL_ATTEMPTS - 1);
    await expect(cancelOrder.forCancellation(order.id)).resolves.toEqual({ outcome: 'canceled', canceledAmount: order.amount });
    expect(attempts).toHaveLength(CANCEL_ATTEMPTS);
    expect(released).toEqual([order.reservationKey]);
    expect(recorded).toEqual(['order.canceled']);
  });

  it('leaves a contended request REQUESTED for the next sweep', async () => {
    const { cancelOrder } = contendedOrder(Number.POSITIVE_INFINITY);
    const completed: string[] = [];
    const requests = {
      pending: async () => [{ id: 'request-1', orderId: order.id, refundAmount: 100 } as CancellationRow],
      complete: async (id: string) => completed.push(id) > 0,
    } as unknown as CancellationRepository;
    const service = new CancellationService(requests, {} as OrderQueries, cancelOrder, createLogger('cancel-test', 'silent'), () => undefined);
    await service.completePending();
    expect(completed).toEqual([]);
  });
});
