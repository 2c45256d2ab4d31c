// Canceling an order: the status moves to CANCELED and the stock goes back to inventory. The
// Release is queued in the same unit of work, so a crash right after the commit cannot lose it.
// Two callers: a client's PATCH (now, at the version it read) and the cancellation worker.
import type { Principal } from '@platform/auth';
import { Conflict } from '@platform/errors';
import { type Logger } from '@platform/service-kit';
import { recordOrderEvent } from '../orders/events';
import type { OrderQueries } from '../orders/queries';
import type { OrderRepository, OrderRow } from '../orders/repository';
import { assertTransition, canTransition, updateOrderAtVersion } from '../orders/status';
import type { StockReservations } from '../stock/reservations';

/** What the worker's cancel did; `contended` leaves the request for the next sweep. */
export type CancelOutcome = 'canceled' | 'already-canceled' | 'not-cancelable' | 'gone' | 'contended';

export interface CancelResult {
  outcome: CancelOutcome;
  /**
   * The amount of the order as it stands canceled (`canceled`, `already-canceled`): what a refund
   * gives back. Read at the version the cancel was written at, so a PUT that changed the items
   * after the request was made counts. 0 when no order stands canceled.
   */
  canceledAmount: number;
}

/** Lost races the worker retries in one go: other writes keep winning only while the order is busy. */
export const CANCEL_ATTEMPTS = 5;

export class CancelOrder {
  constructor(
    private readonly orders: OrderRepository,
    private readonly queries: OrderQueries,
    private readonly stock: StockReservations,
    private readonly logger: Logger,
    private readonly attempts = CANCEL_ATTEMPTS,
  ) {}

  /** PATCH {status: CANCELED}: the owner or an admin cancels now; a couponCode sent with it changes too. */
  async cancel(principal: Principal, id: string, options: { couponCode?: string | null; expectedVersion?: number } = {}): Promise<OrderRow> {
    const order = await this.queries.get(principal, id);
    await updateOrderAtVersion(this.orders, order, options.expectedVersion, async (version) => {
      assertTransition(order.status, 'CANCELED');
      if (options.couponCode !== undefined && order.status !== 'PENDING') throw new Conflict('ORDER_NOT_EDITABLE', 'The coupon can change only while the order is PENDING.');
      return (await this.cancelAt(order, version, options.couponCode)) ? true : null;
    });
    return this.queries.get(principal, id);
  }

  /**
   * The cancellation worker's cancel: the same rules as PATCH, no caller to answer. A write that
   * wins meanwhile means reading the order again, at most `attempts` times; then the request
   * waits for the next sweep rather than holding the worker.
   */
  async forCancellation(orderId: string): Promise<CancelResult> {
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      const order = await this.orders.findById(orderId);
      if (!order) return { outcome: 'gone', canceledAmount: 0 };
      if (order.status === 'CANCELED') return { outcome: 'already-canceled', canceledAmount: order.amount };
      if (!canTransition(order.status, 'CANCELED')) return { outcome: 'not-cancelable', canceledAmount: 0 };
      if (await this.cancelAt(order, order.version)) return { outcome: 'canceled', canceledAmount: order.amount };
    }
    this.logger.warn({ orderId, attempts: this.attempts }, 'order kept changing while being canceled; the next sweep tries again');
    return { outcome: 'contended', canceledAmount: 0 };
  }

  /** False when another write changed the order since `version`: nothing is written then. */
  private async cancelAt(order: OrderRow, version: number, couponCode?: string | null): Promise<boolean> {
    const canceled = await this.orders.unitOfWork(async (writes) => {
      // One clock reading for canceledAt, the order's updatedAt and order.canceled's time.
      const canceledAt = new Date();
      if (!(await writes.updateAtVersion(order.id, version, { status: 'CANCELED', couponCode, canceledAt }, canceledAt))) return false;
      await this.stock.releaseAfterCommit(writes, order.reservationKey, 'order canceled');
      await recordOrderEvent(writes, 'order.canceled', order.id, canceledAt);
      return true;
    });
    if (canceled) await this.stock.release(order.reservationKey, 'order canceled');
    return canceled;
  }
}
