// How much stock orders still owe inventory: releases queued because inventory could not take
// them back at once (the sweeper retries them). Growing means inventory keeps refusing.
import { Gauge, type Registry } from 'prom-client';
import type { ReservationLedger } from './repository';

export function pendingStockReleasesGauge(ledger: ReservationLedger, registry: Registry): Gauge {
  return new Gauge({
    name: 'orders_pending_stock_releases',
    help: 'Stock releases queued for inventory and not yet taken back (cancelled, replaced or failed orders)',
    registers: [registry],
    // Counted when scraped. With the database out the last count stays: /metrics must still answer.
    async collect() {
      const count = await ledger.countPendingReleases().catch(() => undefined);
      if (count !== undefined) this.set(count);
    },
  });
}
