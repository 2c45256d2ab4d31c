// HTTP in and out for an order's shipment.
import { Router } from 'express';
import { adminOnly, principalOf } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import type { OrderQueries } from '../orders/queries';
import { toShipmentResponse } from '../orders/representation';
import { shipmentBody } from '../orders/schemas';
import type { ShipmentService } from './service';

export function shipmentRoutes(queries: OrderQueries, shipments: ShipmentService): Router {
  const router = Router();

  router
    .route('/orders/:id/shipment')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      const order = await queries.get(principalOf(res), req.params.id as string);
      res.json(toShipmentResponse(order.id, order.shipment));
    })
    .put(adminOnly, async (req, res) => {
      const order = await shipments.put(principalOf(res), req.params.id as string, parseBody(shipmentBody, req.body));
      res.json(toShipmentResponse(order.id, order.shipment));
    })
    .all(methodNotAllowed);

  return router;
}
