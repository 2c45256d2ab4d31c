// Prisma queries of cancellation records.
import { type DomainEvent, recordEvent, unitOfWork } from '@platform/events';
import type { PrismaClient } from '../generated/prisma/client';

/** A cancellation request of an order, REQUESTED until the worker completes it. */
export interface CancellationRow {
  id: string;
  orderId: string;
  status: 'REQUESTED' | 'COMPLETED';
  reason: string | null;
  /** In the smallest unit of the order's currency. */
  refundAmount: number;
  createdAt: Date;
  completedAt: Date | null;
}

export class CancellationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  create(data: { id: string; orderId: string; reason: string | null; refundAmount: number }): Promise<CancellationRow> {
    return this.prisma.cancellation.create({ data });
  }

  findByOrder(orderId: string): Promise<CancellationRow | null> {
    return this.prisma.cancellation.findUnique({ where: { orderId } });
  }

  pending(limit: number): Promise<CancellationRow[]> {
    return this.prisma.cancellation.findMany({ where: { status: 'REQUESTED' }, orderBy: { createdAt: 'asc' }, take: limit });
  }

  /**
   * Completes a REQUESTED record once, with the event announcing it in the same transaction;
   * false (and no event) when another worker completed it first. `completedAt`: the use case's
   * clock reading, which the event carries as its time too.
   */
  complete(id: string, refundAmount: number, completedAt: Date, event: DomainEvent): Promise<boolean> {
    return unitOfWork(this.prisma, async (tx) => {
      const { count } = await tx.cancellation.updateMany({ where: { id, status: 'REQUESTED' }, data: { status: 'COMPLETED', refundAmount, completedAt } });
      if (count === 1) await recordEvent(tx, event);
      return count === 1;
    });
  }
}
