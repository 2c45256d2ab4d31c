// Shipping an order (admin): the shipment is created or replaced, and SHIPPED or DELIVERED moves
// the order along the status table in the same unit of work; SHIPPED fulfils its stock in
// inventory. PATCH /orders/{id} with such a status takes the same step (`record`).
import { type Principal, requireAdmin } from '@platform/auth';
import { Conflict } from '@platform/errors';
import { unchangedAtVersion } from '@platform/service-kit';
import { recordOrderEvent, statusEventOf } from '../orders/events';
import type { OrderQueries } from '../orders/queries';
import type { OrderRepository, OrderRow } from '../orders/repository';
import type { ShipmentInput } from '../orders/schemas';
import { assertTransition, type OrderStatus, updateOrderAtVersion } from '../orders/status';
import type { StockReservations } from '../stock/reservations';

/** What a shipment is to become: `carrier` or `trackingNumber` left undefined keep what it has. */
export interface ShipmentChange {
  status: ShipmentInput['status'];
  carrier?: string | null;
  trackingNumber?: string | null;
}

export class ShipmentService {
  constructor(
    private readonly orders: OrderRepository,
    private readonly queries: OrderQueries,
    private readonly stock: StockReservations,
  ) {}

  /** `expectedVersion`: the client's If-Match, the ETag of the shipment it read (its order's version). */
  async put(principal: Principal, orderId: string, input: ShipmentInput, expectedVersion?: number): Promise<OrderRow> {
    requireAdmin(principal);
    const order = await this.queries.get(principal, orderId);
    if (order.status === 'CANCELED') throw new Conflict('CONFLICT', 'The order is canceled; it has no shipment to change.');
    const shipment = { status: input.status, carrier: input.carrier ?? null, trackingNumber: input.trackingNumber ?? null };
    // The shipment it has (PREPARING with nothing set until one is written): no write, so the
    // order's version, the ETag others hold for their If-Match, stays.
    const held = order.shipment ?? { status: 'PREPARING', carrier: null, trackingNumber: null };
    if (shipment.status === held.status && shipment.carrier === held.carrier && shipment.trackingNumber === held.trackingNumber) return unchangedAtVersion(order, expectedVersion);
    await this.record(order, shipment, expectedVersion);
    return this.queries.get(principal, orderId);
  }

  /**
   * The one step that ships an order, for PUT .../shipment and PATCH `status` alike (the caller
   * checked who may): the shipment is written, and SHIPPED or DELIVERED moves the order along the
   * status table in the same unit of work, with its event. Shipping takes the order's stock out
   * of the warehouse: the Fulfil is queued with the change, so a crash after the commit cannot
   * lose it, and made right after. `expectedVersion`: the client's If-Match, if any.
   */
  async record(order: OrderRow, shipment: ShipmentChange, expectedVersion?: number): Promise<void> {
    const target: OrderStatus | undefined = shipment.status === 'PREPARING' ? undefined : shipment.status;
    const moves = target !== undefined && target !== order.status;
    if (moves) assertTransition(order.status, target);
    const ships = target === 'SHIPPED' && order.status !== 'SHIPPED';
    await updateOrderAtVersion(this.orders, order, expectedVersion, (version) =>
      this.orders.unitOfWork(async (writes) => {
        // One clock reading for the order's updatedAt, a first shippedAt and the event's time.
        const now = new Date();
        // The order's version moves with its shipment too, status or not: it is the shipment's
        // ETag, so a write at a version read before another changed the carrier loses its race.
        if (!(await writes.updateAtVersion(order.id, version, moves ? { status: target } : {}, now))) return null;
        if (ships) await this.stock.fulfilAfterCommit(writes, order.reservationKey);
        await writes.upsertShipment(order.id, {
          status: shipment.status,
          carrier: shipment.carrier,
          trackingNumber: shipment.trackingNumber,
          shippedAt: target ? (order.shipment?.shippedAt ?? now) : null,
        });
        const event = moves ? statusEventOf(target) : undefined;
        if (event) await recordOrderEvent(writes, event, order.id, now);
        return true;
      }),
    );
    if (ships) await this.stock.fulfil(order.reservationKey);
  }
}
