// How much stock orders still owe inventory: releases queued because inventory could not take
// them back at once (the sweeper retries them). Growing means inventory keeps refusing.
import { Gauge, type Registry } from 'prom-client';
import type { OrderRepository } from '../orders/repository';

export function pendingStockReleasesGauge(orders: OrderRepository, registry: Registry): Gauge {
  return new Gauge({
    name: 'orders_pending_stock_releases',
    help: 'Stock releases queued for inventory and not yet taken back (cancelled, replaced or failed orders)',
    registers: [registry],
    // Counted when scraped. With the database out the last count stays: /metrics must still answer.
    async collect() {
      const count = await orders.countPendingReleases().catch(() => undefined);
      if (count !== undefined) this.set(count);
    },
  });
}
