// The background worker every replica runs: a sweep at start (work left from before a restart),
// then every ORDERS_SWEEP_MS, one sweep at a time. Its jobs are rows in the database, so any
// replica may do them and a crash loses none.
import type { Logger } from '@platform/service-kit';
import type { CancellationService } from './cancellations/service';
import type { IdempotencyStore } from './idempotency/store';
import type { StockReservations } from './stock/reservations';

export interface SweeperJobs {
  cancellations: CancellationService;
  stock: StockReservations;
  idempotency: IdempotencyStore;
}

export class Sweeper {
  private sweeping: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly jobs: SweeperJobs,
    private readonly logger: Logger,
  ) {}

  start(intervalMs: number): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** Completes requested cancellations, retries stock releases inventory could not take, and forgets expired Idempotency-Keys. */
  sweep(): Promise<void> {
    this.sweeping ??= (async () => {
      try {
        await this.jobs.cancellations.completePending();
        await this.jobs.stock.retryPendingReleases();
        // Keys past their 24 h: the table would otherwise grow forever.
        const purged = await this.jobs.idempotency.purgeExpired(1_000);
        if (purged) this.logger.info({ purged }, 'expired idempotency keys purged');
      } catch (error) {
        this.logger.error({ err: error }, 'sweep failed; will retry');
      } finally {
        this.sweeping = undefined;
      }
    })();
    return this.sweeping;
  }
}
