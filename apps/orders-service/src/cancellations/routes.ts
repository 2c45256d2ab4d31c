// HTTP in and out for an order's cancellation.
import { Router } from 'express';
import { principalOf } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import { cancellationBody } from '../orders/schemas';
import { toCancellationResponse } from './representation';
import type { CancellationService } from './service';

export function cancellationRoutes(cancellations: CancellationService): Router {
  const router = Router();

  router
    .route('/orders/:id/cancellation')
    .post(async (req, res) => {
      const { reason } = parseBody(cancellationBody, req.body);
      const cancellation = await cancellations.request(principalOf(res), req.params.id as string, reason);
      // 202: accepted; the Location tells where to watch it complete.
      res.status(202).location(`/v1/orders/${cancellation.orderId}/cancellation`).json(toCancellationResponse(cancellation));
    })
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      res.json(toCancellationResponse(await cancellations.get(principalOf(res), req.params.id as string)));
    })
    .all(methodNotAllowed);

  return router;
}
