// Prisma queries of pending_releases, the bookkeeping of the stock orders holds in inventory: a
// placement under way (written before its Reserve, ended with its order), and a Release still to
// make (failed, or queued with the change that calls for it). The rules live in reservations.ts.
import { Prisma, type PrismaClient } from '../generated/prisma/client';

/** A reservation inventory still has to give back (RELEASE), or fulfil once its order shipped (FULFIL). */
export interface PendingReleaseRow {
  reservationKey: string;
  call: 'RELEASE' | 'FULFIL';
  reason: string;
  attempts: number;
  createdAt: Date;
  /** Set while an order is being placed under this key. */
  placementDeadline: Date | null;
}

/**
 * The pending releases, read and written on the database, or inside one unit of work
 * (`OrderWrites.reservations`) so that a change and its bookkeeping commit together.
 */
export class ReservationLedger {
  constructor(private readonly client: PrismaClient | Prisma.TransactionClient) {}

  /**
   * Written before the first Reserve of a placement. Until `deadline` the key belongs to a live
   * request; past it, the order was never written (the process died or gave up) and the sweeper
   * gives the key's stock back.
   */
  async recordPlacement(reservationKey: string, deadline: Date): Promise<void> {
    const placing = { reason: 'placing an order', placementDeadline: deadline };
    await this.client.pendingRelease.upsert({ where: { reservationKey }, create: { reservationKey, ...placing }, update: placing });
  }

  /**
   * Ends the placement in the transaction that writes its order. False when the sweeper has
   * already taken it over (its deadline passed): the order must not be written then.
   */
  async completePlacement(reservationKey: string): Promise<boolean> {
    const { count } = await this.client.pendingRelease.deleteMany({ where: { reservationKey, placementDeadline: { not: null } } });
    return count === 1;
  }

  /** Placements past their deadline become releases to make. Row locks order this against completePlacement. */
  async expirePlacements(now: Date): Promise<number> {
    const { count } = await this.client.pendingRelease.updateMany({ where: { placementDeadline: { lt: now } }, data: { placementDeadline: null, reason: 'the order was never written' } });
    return count;
  }

  /**
   * Remembers a reservation inventory still has to give back: a Release that failed, or (inside
   * the transaction that cancels or replaces an order) one about to be made, so that a crash
   * right after the commit cannot lose it. A placement's row turns into a release to make; a
   * release queued again counts the attempt.
   */
  async queueRelease(reservationKey: string, reason: string): Promise<void> {
    const { count } = await this.client.pendingRelease.updateMany({ where: { reservationKey, placementDeadline: { not: null } }, data: { placementDeadline: null, reason } });
    if (count) return;
    await this.client.pendingRelease.upsert({ where: { reservationKey }, create: { reservationKey, reason }, update: { attempts: { increment: 1 } } });
  }

  /**
   * Remembers that inventory still has to fulfil a reservation (its order shipped): queued in the
   * transaction that ships the order, or after a Fulfil that failed (counting the attempt).
   */
  async queueFulfilment(reservationKey: string): Promise<void> {
    const fulfil = { call: 'FULFIL' as const, reason: 'order shipped', placementDeadline: null };
    await this.client.pendingRelease.upsert({ where: { reservationKey }, create: { reservationKey, ...fulfil }, update: { ...fulfil, attempts: { increment: 1 } } });
  }

  pendingReleases(limit: number, createdBefore: Date): Promise<PendingReleaseRow[]> {
    return this.client.pendingRelease.findMany({ where: { placementDeadline: null, createdAt: { lt: createdBefore } }, orderBy: { createdAt: 'asc' }, take: limit });
  }

  /** Releases queued for inventory (not placements still under way, nor fulfilments). */
  countPendingReleases(): Promise<number> {
    return this.client.pendingRelease.count({ where: { placementDeadline: null, call: 'RELEASE' } });
  }

  async releaseDone(reservationKey: string): Promise<void> {
    await this.client.pendingRelease.deleteMany({ where: { reservationKey } });
  }
}
