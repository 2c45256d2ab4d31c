// Shipping an order (admin): the shipment is created or replaced, and SHIPPED or DELIVERED moves
// the order along the status table in the same unit of work; SHIPPED fulfils its stock in inventory.
import { type Principal, requireAdmin } from '@platform/auth';
import { Conflict } from '@platform/errors';
import { recordOrderEvent, statusEventOf } from '../orders/events';
import type { OrderQueries } from '../orders/queries';
import type { OrderRepository, OrderRow } from '../orders/repository';
import type { ShipmentInput } from '../orders/schemas';
import { assertTransition, type OrderStatus, updateOrderAtVersion } from '../orders/status';
import type { StockReservations } from '../stock/reservations';

export class ShipmentService {
  constructor(
    private readonly orders: OrderRepository,
    private readonly queries: OrderQueries,
    private readonly stock: StockReservations,
  ) {}

  async put(principal: Principal, orderId: string, input: ShipmentInput): Promise<OrderRow> {
    requireAdmin(principal);
    const order = await this.queries.get(principal, orderId);
    const target: OrderStatus | undefined = input.status === 'PREPARING' ? undefined : input.status;
    if (order.status === 'CANCELED') throw new Conflict('CONFLICT', 'The order is canceled; it has no shipment to change.');
    if (target && target !== order.status) assertTransition(order.status, target);
    const now = new Date();
    // Shipping: the stock the order holds leaves the warehouse, so inventory is told in the same unit of work.
    const ships = target === 'SHIPPED' && order.status !== 'SHIPPED';
    await updateOrderAtVersion(this.orders, order, undefined, (version) =>
      this.orders.unitOfWork(async (writes) => {
        if (target && target !== order.status && !(await writes.updateAtVersion(order.id, version, { status: target }))) return null;
        if (ships) await this.stock.fulfilAfterCommit(writes, order.reservationKey);
        await writes.upsertShipment(order.id, {
          status: input.status,
          carrier: input.carrier ?? null,
          trackingNumber: input.trackingNumber ?? null,
          shippedAt: input.status === 'PREPARING' ? null : (order.shipment?.shippedAt ?? now),
        });
        const event = target && target !== order.status ? statusEventOf(target) : undefined;
        if (event) await recordOrderEvent(writes, event, order.id);
        return true;
      }),
    );
    if (ships) await this.stock.fulfil(order.reservationKey);
    return this.queries.get(principal, orderId);
  }
}
