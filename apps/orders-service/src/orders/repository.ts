// Prisma queries of orders and their items and shipments.
import { keysetQuery, type PageRequest } from '@platform/paging';
import { Prisma, type PrismaClient } from '../generated/prisma/client';
import type { OrderStatus } from './status';

const withChildren = { items: { orderBy: { id: 'asc' } }, shipment: true } as const satisfies Prisma.OrderInclude;

export type OrderRow = Prisma.OrderGetPayload<{ include: typeof withChildren }>;
export type OrderItemRow = Prisma.OrderItemGetPayload<object>;
export type Transaction = Prisma.TransactionClient;

export interface OrderFilters {
  userId?: string;
  ids?: string[];
  statuses?: OrderStatus[];
  createdFrom?: Date;
  createdBefore?: Date;
  minAmount?: number;
  hasCoupon?: boolean;
  productNameContains?: string;
}

export interface NewOrder {
  id: string;
  userId: string;
  amount: number;
  currency: string;
  couponCode: string | null;
  reservationKey: string;
  items: Omit<Prisma.OrderItemCreateManyInput, 'orderId'>[];
}

function whereOf(filters: OrderFilters): Prisma.OrderWhereInput {
  return {
    userId: filters.userId,
    id: filters.ids ? { in: filters.ids } : undefined,
    status: filters.statuses ? { in: filters.statuses } : undefined,
    createdAt: filters.createdFrom || filters.createdBefore ? { gte: filters.createdFrom, lt: filters.createdBefore } : undefined,
    amount: filters.minAmount !== undefined ? { gte: filters.minAmount } : undefined,
    couponCode: filters.hasCoupon === undefined ? undefined : filters.hasCoupon ? { not: null } : null,
    items: filters.productNameContains ? { some: { productName: { contains: filters.productNameContains, mode: 'insensitive' } } } : undefined,
  };
}

export class OrderRepository {
  constructor(private readonly prisma: PrismaClient) {}

  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.prisma.$transaction(work);
  }

  /** The order, its items and its shipment, written together. */
  async create(tx: Transaction, order: NewOrder): Promise<OrderRow> {
    const { items, ...fields } = order;
    await tx.order.create({ data: { ...fields, shipment: { create: {} } } });
    await tx.orderItem.createMany({ data: items.map((item) => ({ ...item, orderId: order.id })) });
    return tx.order.findUniqueOrThrow({ where: { id: order.id }, include: withChildren });
  }

  findById(id: string, client: Transaction | PrismaClient = this.prisma): Promise<OrderRow | null> {
    return client.order.findUnique({ where: { id }, include: withChildren });
  }

  findByIds(ids: readonly string[]): Promise<OrderRow[]> {
    return this.prisma.order.findMany({ where: { id: { in: [...ids] } }, include: withChildren });
  }

  /** Updates only at the expected version; false when another write got there first. */
  async updateVersioned(id: string, version: number, data: Prisma.OrderUpdateManyMutationInput, tx: Transaction | PrismaClient = this.prisma): Promise<boolean> {
    const { count } = await tx.order.updateMany({ where: { id, version }, data: { ...data, version: { increment: 1 } } });
    return count === 1;
  }

  async replaceItems(tx: Transaction, orderId: string, items: NewOrder['items']): Promise<void> {
    await tx.orderItem.deleteMany({ where: { orderId } });
    await tx.orderItem.createMany({ data: items.map((item) => ({ ...item, orderId })) });
  }

  async delete(id: string, version: number): Promise<boolean> {
    const { count } = await this.prisma.order.deleteMany({ where: { id, version } });
    return count === 1;
  }

  async list(filters: OrderFilters, page: PageRequest): Promise<{ rows: OrderRow[]; total?: number }> {
    const where = whereOf(filters);
    const keyset = keysetQuery(page);
    const [rows, total] = await Promise.all([
      this.prisma.order.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: page.take + 1, skip: page.skip, include: withChildren }),
      page.withTotal ? this.prisma.order.count({ where }) : Promise.resolve(undefined),
    ]);
    return { rows, total };
  }

  findItem(id: string) {
    return this.prisma.orderItem.findUnique({ where: { id }, include: { order: { select: { userId: true } } } });
  }

  async listItems(orderId: string, page: PageRequest): Promise<{ rows: OrderItemRow[]; total?: number }> {
    const keyset = keysetQuery(page);
    const [rows, total] = await Promise.all([
      this.prisma.orderItem.findMany({ where: { AND: [{ orderId }, keyset.where] }, orderBy: keyset.orderBy, take: page.take + 1, skip: page.skip }),
      page.withTotal ? this.prisma.orderItem.count({ where: { orderId } }) : Promise.resolve(undefined),
    ]);
    return { rows, total };
  }

  /**
   * Written before the first Reserve of a placement. Until `deadline` the key belongs to a live
   * request; past it, the order was never written (the process died or gave up) and the sweeper
   * gives the key's stock back.
   */
  async recordPlacement(reservationKey: string, deadline: Date): Promise<void> {
    const placing = { reason: 'placing an order', placementDeadline: deadline };
    await this.prisma.pendingRelease.upsert({ where: { reservationKey }, create: { reservationKey, ...placing }, update: placing });
  }

  /**
   * In the transaction that writes the order: ends the placement. False when the sweeper has
   * already taken it over (its deadline passed): the order must not be written then.
   */
  async completePlacement(tx: Transaction, reservationKey: string): Promise<boolean> {
    const { count } = await tx.pendingRelease.deleteMany({ where: { reservationKey, placementDeadline: { not: null } } });
    return count === 1;
  }

  /** Placements past their deadline become releases to make. Row locks order this against completePlacement. */
  async expirePlacements(now: Date): Promise<number> {
    const { count } = await this.prisma.pendingRelease.updateMany({ where: { placementDeadline: { lt: now } }, data: { placementDeadline: null, reason: 'the order was never written' } });
    return count;
  }

  /**
   * Remembers a reservation inventory still has to give back: a Release that failed, or (inside
   * the transaction that cancels or replaces an order) one about to be made, so that a crash
   * right after the commit cannot lose it. A placement's row turns into a release to make.
   */
  async queueRelease(reservationKey: string, reason: string, client: Transaction | PrismaClient = this.prisma): Promise<void> {
    const { count } = await client.pendingRelease.updateMany({ where: { reservationKey, placementDeadline: { not: null } }, data: { placementDeadline: null, reason } });
    if (count) return;
    await client.pendingRelease.upsert({ where: { reservationKey }, create: { reservationKey, reason }, update: { attempts: { increment: 1 } } });
  }

  pendingReleases(limit: number, createdBefore: Date) {
    return this.prisma.pendingRelease.findMany({ where: { placementDeadline: null, createdAt: { lt: createdBefore } }, orderBy: { createdAt: 'asc' }, take: limit });
  }

  /** Releases queued for inventory (not placements still under way). */
  countPendingReleases(): Promise<number> {
    return this.prisma.pendingRelease.count({ where: { placementDeadline: null } });
  }

  async releaseDone(reservationKey: string): Promise<void> {
    await this.prisma.pendingRelease.deleteMany({ where: { reservationKey } });
  }

  upsertShipment(tx: Transaction, orderId: string, data: Omit<Prisma.ShipmentUncheckedCreateInput, 'orderId'>) {
    return tx.shipment.upsert({ where: { orderId }, create: { orderId, ...data }, update: data });
  }
}
