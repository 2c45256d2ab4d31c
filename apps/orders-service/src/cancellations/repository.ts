// Prisma queries of cancellation records.
import type { PrismaClient } from '../generated/prisma/client';

export class CancellationRepository {
  constructor(private readonly prisma: PrismaClient) {}

  create(data: { id: string; orderId: string; reason: string | null; refundAmount: number }) {
    return this.prisma.cancellation.create({ data });
  }

  findByOrder(orderId: string) {
    return this.prisma.cancellation.findUnique({ where: { orderId } });
  }

  pending(limit: number) {
    return this.prisma.cancellation.findMany({ where: { status: 'REQUESTED' }, orderBy: { createdAt: 'asc' }, take: limit });
  }

  /** Completes a REQUESTED record once; false when another worker completed it first. */
  async complete(id: string, refundAmount: number): Promise<boolean> {
    const { count } = await this.prisma.cancellation.updateMany({ where: { id, status: 'REQUESTED' }, data: { status: 'COMPLETED', refundAmount, completedAt: new Date() } });
    return count === 1;
  }
}

export type CancellationRow = NonNullable<Awaited<ReturnType<CancellationRepository['findByOrder']>>>;
