// Cancellation as its own resource: accepted at once (202), completed in the background.
// Pending records live in the database, so a restart picks them up again.
import type { Principal } from '@platform/auth';
import { ApiError } from '@platform/errors';
import { newId } from '@platform/ids';
import type { Logger } from '@platform/service-kit';
import { idField, z } from '@platform/validation';
import type { OrderService } from '../orders/service';
import { assertTransition } from '../orders/status';
import type { CancellationRepository, CancellationRow } from './repository';

export const cancellationRepresentation = z.object({
  id: idField(),
  orderId: idField(),
  status: z.enum(['REQUESTED', 'COMPLETED']),
  reason: z.string().nullable(),
  refundAmount: z.number().int().min(0).meta({ description: 'In the smallest unit of the order\'s currency.' }),
  createdAt: z.iso.datetime(),
  completedAt: z.iso.datetime().nullable(),
});

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

export class CancellationService {
  private sweeping: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly cancellations: CancellationRepository,
    private readonly orders: OrderService,
    private readonly logger: Logger,
  ) {}

  /** Records the request (or returns the one already made) and wakes the worker. */
  async request(principal: Principal, orderId: string, reason?: string): Promise<CancellationRow> {
    const order = await this.orders.get(principal, orderId);
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
    setImmediate(() => void this.sweep());
    return created;
  }

  async get(principal: Principal, orderId: string): Promise<CancellationRow> {
    const order = await this.orders.get(principal, orderId);
    const cancellation = await this.cancellations.findByOrder(order.id);
    if (!cancellation) throw ApiError.notFound('Cancellation');
    return cancellation;
  }

  /** Starts the background worker: a sweep now (pending work from before a restart), then periodically. */
  start(intervalMs: number): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** Completes pending cancellations, retries stock releases that failed and purges expired idempotency keys. One at a time. */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        for (const cancellation of await this.cancellations.pending(50)) {
          const outcome = await this.orders.cancelForCancellation(cancellation.orderId);
          // An order that shipped before the request was processed is not refunded.
          const refund = outcome === 'not-cancelable' ? 0 : cancellation.refundAmount;
          if (await this.cancellations.complete(cancellation.id, refund)) this.logger.info({ orderId: cancellation.orderId, outcome }, 'cancellation completed');
        }
        await this.orders.releasePendingStock();
        const purged = await this.orders.purgeExpiredIdempotencyKeys();
        if (purged) this.logger.info({ purged }, 'expired idempotency keys purged');
      } catch (error) {
        this.logger.error({ err: error }, 'cancellation sweep failed; will retry');
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }
}
