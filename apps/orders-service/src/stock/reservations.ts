// Stock an order holds in inventory: reserved all or nothing when an order is placed or its items
// replaced, given back when it is canceled, replaced, deleted before shipping or never written,
// and fulfilled (gone from the warehouse) when it ships. A Release inventory cannot
// take now is queued and retried by the sweeper (`retryPendingReleases`), so no stock is lost.
// Its bookkeeping (placements under way, releases to make) is the ledger's (repository.ts).
import { ApiError, Conflict, OutOfStock } from '@platform/errors';
import type { InventoryGateway } from '@platform/inventory-contract';
import { type Logger, remainingMs } from '@platform/service-kit';
import type { PricedOrder } from '../orders/pricing';
import type { CreateOrderInput } from '../orders/schemas';
import type { ReservationLedger } from './repository';

/** The writes of a unit of work that can keep the ledger (`OrderWrites` is one). */
export interface WritesWithReservations {
  readonly reservations: ReservationLedger;
}

/**
 * How long after its request's deadline a placement's stock stays reserved with no order written.
 * Past it the sweeper releases the stock (a crash between Reserve and the order's commit), so
 * stock is whole again within deadline + this margin + one sweep interval.
 */
export const PLACEMENT_MARGIN_MS = 5_000;

/** The unit of work that writes the order found its placement taken over by the sweeper. */
function placementTooLate(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'Placing the order took too long; its stock was released. Retry the request.', { headers: { 'Retry-After': '1' } });
}

export class StockReservations {
  constructor(
    private readonly ledger: ReservationLedger,
    private readonly inventory: InventoryGateway,
    private readonly logger: Logger,
  ) {}

  /**
   * Records the placement (so the sweeper frees the stock if the order is never written), then
   * reserves every item under `reservationKey` in one ReserveOrder call: inventory takes all of
   * them or none, so a refusal leaves nothing to give back. The caller keeps the stock in the
   * unit of work that writes the order (`keep`), or gives it back (`release`).
   *
   * `replaces`: the reservation key these items replace (an order's items changed). Its units
   * count as available to the new key, so lowering a quantity never needs spare stock. Releasing
   * the new key (a replacement that lost its race, failed or was never written) puts the old
   * reservation back as it was; releasing the old key, once the order holds the new one, gives back
   * what the new key did not take over.
   */
  async reserve(reservationKey: string, items: CreateOrderInput['items'], priced: PricedOrder, replaces?: string): Promise<void> {
    await this.ledger.recordPlacement(reservationKey, new Date(Date.now() + remainingMs() + PLACEMENT_MARGIN_MS));
    try {
      await this.inventory.reserveOrder(reservationKey, priced.items.map((item) => ({ sku: item.sku, quantity: item.quantity })), replaces);
    } catch (error) {
      if (error instanceof Conflict) {
        // Refused (the reservations it replaces are no longer held): nothing was taken, nothing to release.
        await this.ledger.releaseDone(reservationKey);
        throw error;
      }
      if (error instanceof OutOfStock) {
        // Refused: inventory took nothing under this key, so its placement has nothing to release.
        await this.ledger.releaseDone(reservationKey);
        const refused = new Set(error.skus);
        throw new OutOfStock(
          'Not enough stock for some items; nothing was reserved.',
          [...refused],
          priced.items.flatMap((item, index) => (refused.has(item.sku) ? [{ field: `items[${index}].quantity`, code: 'OUT_OF_RANGE' as const, message: `Not enough stock of ${items[index].productId}.` }] : [])),
        );
      }
      // Timed out or unanswered: the reservation may still commit after this release, so the
      // sweeper releases again later (Release is idempotent).
      await this.release(reservationKey, 'the reservation failed; its outcome is unknown');
      await this.ledger.queueRelease(reservationKey, 'a reservation timed out; its outcome is unknown');
      throw error;
    }
  }

  /**
   * In the unit of work that writes the order: the stock reserved under `reservationKey` now
   * belongs to it. Refused (503, retry) when the sweeper took the placement over because its
   * deadline passed: the stock went back, so the order must not be written.
   */
  async keep(writes: WritesWithReservations, reservationKey: string): Promise<void> {
    if (!(await writes.reservations.completePlacement(reservationKey))) throw placementTooLate();
  }

  /**
   * In the unit of work that cancels, replaces or deletes an order: the Release about to be made, queued
   * with the change, so that a crash right after the commit cannot lose it (`release` then
   * clears it, or the sweeper makes it).
   */
  async releaseAfterCommit(writes: WritesWithReservations, reservationKey: string, why: string): Promise<void> {
    await writes.reservations.queueRelease(reservationKey, why);
  }

  /**
   * Gives a reservation's stock back. If inventory cannot take it now, the key is queued and the
   * sweeper retries until it can (Release is idempotent).
   */
  async release(reservationKey: string, why: string): Promise<void> {
    try {
      await this.inventory.release(reservationKey);
      await this.ledger.releaseDone(reservationKey);
    } catch (error) {
      this.logger.warn({ err: error, reservationKey, why }, 'stock release failed; queued for retry');
      await this.ledger.queueRelease(reservationKey, why);
    }
  }

  /**
   * In the unit of work that ships an order: inventory is to fulfil its reservation (the stock
   * leaves the warehouse), queued with the change so that a crash after the commit cannot lose it.
   */
  async fulfilAfterCommit(writes: WritesWithReservations, reservationKey: string): Promise<void> {
    await writes.reservations.queueFulfilment(reservationKey);
  }

  /** Tells inventory the order shipped. If it cannot take it now, the sweeper retries (Fulfil is idempotent). */
  async fulfil(reservationKey: string): Promise<void> {
    try {
      await this.inventory.fulfil(reservationKey);
      await this.ledger.releaseDone(reservationKey);
    } catch (error) {
      this.logger.warn({ err: error, reservationKey }, 'stock fulfilment failed; queued for retry');
      await this.ledger.queueFulfilment(reservationKey);
    }
  }

  /**
   * The sweeper's part: placements whose order was never written become releases, then queued
   * releases and fulfilments are retried; returns how many inventory took now. Entries younger than
   * `graceMs` wait, so a Reserve that committed late is released too.
   */
  async retryPendingReleases(options: { limit?: number; graceMs?: number; now?: Date } = {}): Promise<number> {
    const now = options.now ?? new Date();
    const dead = await this.ledger.expirePlacements(now);
    if (dead) this.logger.warn({ placements: dead }, 'order placements died before writing their order; releasing their stock');
    let released = 0;
    for (const pending of await this.ledger.pendingReleases(options.limit ?? 50, new Date(now.getTime() - (options.graceMs ?? 5_000)))) {
      const fulfil = pending.call === 'FULFIL';
      try {
        await (fulfil ? this.inventory.fulfil(pending.reservationKey) : this.inventory.release(pending.reservationKey));
        await this.ledger.releaseDone(pending.reservationKey);
        released += 1;
      } catch {
        // Counts the attempt.
        await (fulfil ? this.ledger.queueFulfilment(pending.reservationKey) : this.ledger.queueRelease(pending.reservationKey, pending.reason));
        break; // inventory is still away; the next sweep tries again
      }
    }
    return released;
  }
}
