// HTTP in and out for webhook endpoints, their deliveries and the event log.
import { Router } from 'express';
import { principalOf } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { mapListItems } from '@platform/paging';
import { expectedVersion } from '@platform/service-kit';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import { toDeliveryResponse, toEndpointResponse, toEndpointWithSecretResponse, toEventResponse } from './representation';
import { createEndpointBody, listDeliveriesQuery, listEndpointsQuery, listEventsQuery, patchEndpointBody } from './schemas';
import type { WebhookService } from './service';

const etagOf = (endpoint: { version: number }) => `"${endpoint.version}"`;

export function webhookRoutes(webhooks: WebhookService): Router {
  const router = Router();

  router
    .route('/webhook-endpoints')
    .post(async (req, res) => {
      const endpoint = await webhooks.create(principalOf(res), parseBody(createEndpointBody, req.body));
      // The secret is in this answer only: nothing may keep a copy of it.
      res.status(201).location(`/v1/webhook-endpoints/${endpoint.id}`).setHeader('ETag', etagOf(endpoint)).setHeader('Cache-Control', 'no-store').json(toEndpointWithSecretResponse(endpoint));
    })
    .get(async (req, res) => {
      res.json(mapListItems(await webhooks.list(principalOf(res), parseQuery(listEndpointsQuery, req.query)), toEndpointResponse));
    })
    .all(methodNotAllowed);

  router
    .route('/webhook-endpoints/:id')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      const endpoint = await webhooks.get(principalOf(res), req.params.id as string);
      res.setHeader('ETag', etagOf(endpoint)).json(toEndpointResponse(endpoint));
    })
    .patch(async (req, res) => {
      const endpoint = await webhooks.patch(principalOf(res), req.params.id as string, parseBody(patchEndpointBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(endpoint)).json(toEndpointResponse(endpoint));
    })
    .delete(async (req, res) => {
      await webhooks.delete(principalOf(res), req.params.id as string);
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/webhook-endpoints/:id/secret/rotation')
    .post(async (req, res) => {
      const endpoint = await webhooks.rotateSecret(principalOf(res), req.params.id as string);
      res.setHeader('ETag', etagOf(endpoint)).setHeader('Cache-Control', 'no-store').json(toEndpointWithSecretResponse(endpoint));
    })
    .all(methodNotAllowed);

  router
    .route('/webhook-endpoints/:id/deliveries')
    .get(async (req, res) => {
      res.json(mapListItems(await webhooks.listDeliveries(principalOf(res), req.params.id as string, parseQuery(listDeliveriesQuery, req.query)), toDeliveryResponse));
    })
    .all(methodNotAllowed);

  router
    .route('/webhook-endpoints/:id/deliveries/:deliveryId/retry')
    .post(async (req, res) => {
      const delivery = await webhooks.retryDelivery(principalOf(res), req.params.id as string, req.params.deliveryId as string);
      res.status(202).json(toDeliveryResponse(delivery));
    })
    .all(methodNotAllowed);

  router
    .route('/events')
    .get(async (req, res) => {
      res.json(mapListItems(await webhooks.listEvents(principalOf(res), parseQuery(listEventsQuery, req.query)), toEventResponse));
    })
    .all(methodNotAllowed);

  return router;
}
