// Cancellation as its own resource: accepted at once (202), completed in the background by the
// sweeper. Pending records live in the database, so a restart picks them up again.
import type { Principal } from '@platform/auth';
import { NotFound } from '@platform/errors';
import { domainEvent } from '@platform/events';
import { newId } from '@platform/ids';
import { type Logger, requireExpectedVersion } from '@platform/service-kit';
import type { OrderQueries } from '../orders/queries';
import { assertTransition } from '../orders/status';
import type { CancelOrder } from './cancel-order';
import type { CancellationRepository, CancellationRow } from './repository';

export class CancellationService {
  constructor(
    private readonly cancellations: CancellationRepository,
    private readonly queries: OrderQueries,
    private readonly cancelOrder: CancelOrder,
    private readonly logger: Logger,
    /** Runs a sweep soon, so a request does not wait for the next interval. */
    private readonly wakeWorker: () => void,
  ) {}

  /**
   * Records the request (or returns the one already made) and wakes the worker. With If-Match
   * the request is accepted only for the order at the version the client read (412 otherwise, as
   * PATCH {status: CANCELED} answers), checked first, as every conditional write does.
   */
  async request(principal: Principal, orderId: string, reason?: string, expectedVersion?: number): Promise<CancellationRow> {
    const order = await this.queries.get(principal, orderId);
    requireExpectedVersion(order.version, expectedVersion);
    const existing = await this.cancellations.findByOrder(order.id);
    if (existing) return existing;
    assertTransition(order.status, 'CANCELED');
    let created: CancellationRow;
    try {
      created = await this.cancellations.create({ id: newId(), orderId: order.id, reason: reason ?? null, refundAmount: order.amount });
    } catch (error) {
      const raced = await this.cancellations.findByOrder(order.id);
      if (raced) return raced;
      throw error;
    }
    this.wakeWorker();
    return created;
  }

  async get(principal: Principal, orderId: string): Promise<CancellationRow> {
    const order = await this.queries.get(principal, orderId);
    const cancellation = await this.cancellations.findByOrder(order.id);
    if (!cancellation) throw NotFound.of('Cancellation');
    return cancellation;
  }

  /** The worker's part: cancels the orders of pending requests and completes the requests. */
  async completePending(): Promise<void> {
    for (const cancellation of await this.cancellations.pending(50)) {
      const { outcome, canceledAmount } = await this.cancelOrder.forCancellation(cancellation.orderId);
      if (outcome === 'contended') continue; // still REQUESTED: the next sweep tries again
      // The refund is the amount of the order that stands canceled, not the one recorded with the
      // request (a PUT may have changed the items since); an order that shipped first gets none.
      const refund = canceledAmount;
      // One clock reading for the cancellation's completedAt and its event's time.
      const completedAt = new Date();
      const completed = domainEvent('order.cancellation.completed', cancellation.orderId, { cancellationId: cancellation.id, orderId: cancellation.orderId, outcome, refundAmount: refund }, completedAt);
      if (await this.cancellations.complete(cancellation.id, refund, completedAt, completed)) this.logger.info({ orderId: cancellation.orderId, outcome }, 'cancellation completed');
    }
  }
}
