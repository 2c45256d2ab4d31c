// Prisma queries of orders and their items and shipments.
import { findKeysetPage, type PageRequest } from '@platform/paging';
import { Prisma, type PrismaClient } from '../generated/prisma/client';
import type { OrderStatus } from './status';

const withChildren = { items: { orderBy: { id: 'asc' } }, shipment: true } as const satisfies Prisma.OrderInclude;

export type OrderRow = Prisma.OrderGetPayload<{ include: typeof withChildren }>;
export type OrderItemRow = Prisma.OrderItemGetPayload<object>;
type Client = Prisma.TransactionClient | PrismaClient;

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
  items: NewOrderItem[];
}

export interface NewOrderItem {
  id: string;
  productId: string;
  sku: string;
  productName: string;
  quantity: number;
  unitPrice: number;
  amount: number;
}

/** What a versioned update may change; fields left out keep their value. */
export interface OrderChanges {
  status?: OrderStatus;
  couponCode?: string | null;
  canceledAt?: Date;
  amount?: number;
  currency?: string;
  reservationKey?: string;
}

export interface ShipmentChanges {
  status: 'PREPARING' | 'SHIPPED' | 'DELIVERED';
  carrier?: string | null;
  trackingNumber?: string | null;
  shippedAt: Date | null;
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

  /**
   * Runs `work` as one transaction: everything it writes through `OrderWrites` commits together,
   * or nothing does when it throws.
   */
  unitOfWork<T>(work: (writes: OrderWrites) => Promise<T>): Promise<T> {
    return this.prisma.$transaction((tx) => work(new OrderWrites(tx)));
  }

  findById(id: string): Promise<OrderRow | null> {
    return this.prisma.order.findUnique({ where: { id }, include: withChildren });
  }

  /** The order's status now; undefined when it is gone. */
  async statusOf(id: string): Promise<OrderStatus | undefined> {
    return (await this.prisma.order.findUnique({ where: { id }, select: { status: true } }))?.status;
  }

  findByIds(ids: readonly string[]): Promise<OrderRow[]> {
    return this.prisma.order.findMany({ where: { id: { in: [...ids] } }, include: withChildren });
  }

  async delete(id: string, version: number): Promise<boolean> {
    const { count } = await this.prisma.order.deleteMany({ where: { id, version } });
    return count === 1;
  }

  async list(filters: OrderFilters, page: PageRequest): Promise<{ rows: OrderRow[]; total?: number }> {
    const where = whereOf(filters);
    return findKeysetPage(page, {
      find: (keyset) => this.prisma.order.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip, include: withChildren }),
      count: () => this.prisma.order.count({ where }),
    });
  }

  findItem(id: string) {
    return this.prisma.orderItem.findUnique({ where: { id }, include: { order: { select: { userId: true } } } });
  }

  async listItems(orderId: string, page: PageRequest): Promise<{ rows: OrderItemRow[]; total?: number }> {
    return findKeysetPage(page, {
      find: (keyset) => this.prisma.orderItem.findMany({ where: { AND: [{ orderId }, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip }),
      count: () => this.prisma.orderItem.count({ where: { orderId } }),
    });
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

  /** Placements past their deadline become releases to make. Row locks order this against completePlacement. */
  async expirePlacements(now: Date): Promise<number> {
    const { count } = await this.prisma.pendingRelease.updateMany({ where: { placementDeadline: { lt: now } }, data: { placementDeadline: null, reason: 'the order was never written' } });
    return count;
  }

  /** Remembers a Release that failed, for the sweeper to retry (see `queueRelease`). */
  queueRelease(reservationKey: string, reason: string): Promise<void> {
    return queueRelease(this.prisma, reservationKey, reason);
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
}

/**
 * Remembers a reservation inventory still has to give back: a Release that failed, or (inside
 * the transaction that cancels or replaces an order) one about to be made, so that a crash
 * right after the commit cannot lose it. A placement's row turns into a release to make.
 */
async function queueRelease(client: Client, reservationKey: string, reason: string): Promise<void> {
  const { count } = await client.pendingRelease.updateMany({ where: { reservationKey, placementDeadline: { not: null } }, data: { placementDeadline: null, reason } });
  if (count) return;
  await client.pendingRelease.upsert({ where: { reservationKey }, create: { reservationKey, reason }, update: { attempts: { increment: 1 } } });
}

/** The writes of one unit of work (`OrderRepository.unitOfWork`): they commit together or not at all. */
export class OrderWrites {
  constructor(private readonly tx: Prisma.TransactionClient) {}

  /** The order, its items and its shipment, written together. */
  async create(order: NewOrder): Promise<OrderRow> {
    const { items, ...fields } = order;
    await this.tx.order.create({ data: { ...fields, shipment: { create: {} } } });
    await this.tx.orderItem.createMany({ data: items.map((item) => ({ ...item, orderId: order.id })) });
    return this.tx.order.findUniqueOrThrow({ where: { id: order.id }, include: withChildren });
  }

  /** Updates only at the expected version; false when another write got there first. */
  async updateAtVersion(id: string, version: number, changes: OrderChanges): Promise<boolean> {
    const { count } = await this.tx.order.updateMany({ where: { id, version }, data: { ...changes, version: { increment: 1 } } });
    return count === 1;
  }

  async replaceItems(orderId: string, items: NewOrderItem[]): Promise<void> {
    await this.tx.orderItem.deleteMany({ where: { orderId } });
    await this.tx.orderItem.createMany({ data: items.map((item) => ({ ...item, orderId })) });
  }

  async upsertShipment(orderId: string, shipment: ShipmentChanges): Promise<void> {
    await this.tx.shipment.upsert({ where: { orderId }, create: { orderId, ...shipment }, update: shipment });
  }

  /**
   * Ends the placement in the transaction that writes its order. False when the sweeper has
   * already taken it over (its deadline passed): the order must not be written then.
   */
  async completePlacement(reservationKey: string): Promise<boolean> {
    const { count } = await this.tx.pendingRelease.deleteMany({ where: { reservationKey, placementDeadline: { not: null } } });
    return count === 1;
  }

  /** A Release about to be made, remembered with the change that calls for it (see `queueRelease`). */
  queueRelease(reservationKey: string, reason: string): Promise<void> {
    return queueRelease(this.tx, reservationKey, reason);
  }

  /** An Idempotency-Key's response, stored with the order it describes, so both exist or neither does. */
  async storeIdempotentResponse(userId: string, key: string, status: number, body: unknown): Promise<void> {
    await this.tx.idempotencyKey.update({ where: { userId_key: { userId, key } }, data: { responseStatus: status, responseBody: body as Prisma.InputJsonValue } });
  }
}
