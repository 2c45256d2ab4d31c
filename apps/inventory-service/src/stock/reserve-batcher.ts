// Concurrent Reserve calls for one SKU queue behind the statement in flight and go to the
// database together as the next batch: one row lock and one commit for many reservations,
// instead of one each. A lone call is a batch of one, so it waits for nobody.
import { isUniqueViolation } from '@platform/db';
import type { ReserveOutcome, ReserveRequestRow, StockRepository } from './repository';

const MAX_BATCH = 500;
const MAX_ATTEMPTS = 3;

interface Waiting {
  request: ReserveRequestRow;
  resolve(outcome: ReserveOutcome): void;
  reject(error: unknown): void;
}

export class ReserveBatcher {
  private readonly queues = new Map<string, Waiting[]>();

  constructor(private readonly stock: StockRepository) {}

  reserve(sku: string, request: ReserveRequestRow): Promise<ReserveOutcome> {
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(sku);
      if (queue) {
        queue.push({ request, resolve, reject });
        return;
      }
      this.queues.set(sku, [{ request, resolve, reject }]);
      void this.drain(sku);
    });
  }

  /** Runs batches for `sku` until nobody waits; the queue exists exactly while a drain runs. */
  private async drain(sku: string): Promise<void> {
    const queue = this.queues.get(sku)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      try {
        const outcomes = await this.withRetry(sku, batch.map((waiting) => waiting.request));
        batch.forEach((waiting, index) => waiting.resolve(outcomes[index]));
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    this.queues.delete(sku);
  }

  /** Another replica inserting the same (order, sku) first fails the statement whole; run it again. */
  private async withRetry(sku: string, requests: ReserveRequestRow[]): Promise<ReserveOutcome[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.stock.reserveBatch(sku, requests);
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
  }
}
