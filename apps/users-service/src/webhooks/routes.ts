// HTTP in and out for webhook endpoints, their deliveries and the event log: each endpoint
// declared once, its handler beside it.
import { defineEndpoints, publicPath } from '@platform/endpoints';
import { mapListItems } from '@platform/paging';
import { resourceId } from '@platform/validation';
import {
  toDeliveryResponse,
  toEndpointResponse,
  toEndpointWithSecretResponse,
  toEventResponse,
  webhookDeliveryPageRepresentation,
  webhookDeliveryRepresentation,
  webhookEndpointPageRepresentation,
  webhookEndpointRepresentation,
  webhookEndpointWithSecretRepresentation,
  webhookEventPageRepresentation,
} from './representation';
import { createEndpointBody, endpointSortFields, eventSortFields, listDeliveriesQuery, listEndpointsQuery, listEventsQuery, patchEndpointBody, rotateSecretBody } from './schemas';
import type { WebhookService } from './service';

const etagOf = (endpoint: { version: number }) => `"${endpoint.version}"`;

const webhookEndpointInPath = resourceId('Webhook endpoint');

export const webhookEndpoints = defineEndpoints('users', {
  createWebhookEndpoint: {
    method: 'POST', path: '/webhook-endpoints', summary: 'Register a URL to receive events at; the signing secret is in this answer only', access: 'signed-in',
    body: createEndpointBody, forbidden: true,
    responses: { 201: { description: 'The endpoint and its signing secret (shown once)', body: webhookEndpointWithSecretRepresentation, headers: ['Location', 'ETag'] } },
  },
  listWebhookEndpoints: {
    method: 'GET', path: '/webhook-endpoints', summary: "List the caller's webhook endpoints", access: 'signed-in',
    query: listEndpointsQuery, sortFields: endpointSortFields,
    responses: { 200: { description: 'A page of webhook endpoints', body: webhookEndpointPageRepresentation } },
  },
  getWebhookEndpoint: {
    method: 'GET', path: '/webhook-endpoints/:id', summary: 'Read a webhook endpoint (never its secret)', access: 'signed-in',
    params: { id: webhookEndpointInPath },
    responses: { 200: { description: 'The endpoint', body: webhookEndpointRepresentation, headers: ['ETag'] } },
  },
  updateWebhookEndpoint: {
    method: 'PATCH', path: '/webhook-endpoints/:id', summary: 'Change the fields sent; status ENABLED or DISABLED', access: 'signed-in',
    params: { id: webhookEndpointInPath },
    body: patchEndpointBody, forbidden: true, ifMatch: true,
    responses: { 200: { description: 'The endpoint', body: webhookEndpointRepresentation, headers: ['ETag'] } },
  },
  deleteWebhookEndpoint: {
    method: 'DELETE', path: '/webhook-endpoints/:id', summary: 'Delete a webhook endpoint and its deliveries', access: 'signed-in',
    params: { id: webhookEndpointInPath }, ifMatch: true,
    responses: { 204: { description: 'Deleted' } },
  },
  rotateWebhookSecret: {
    method: 'POST', path: '/webhook-endpoints/:id/secret/rotation', summary: 'A new signing secret, shown once; the previous one keeps signing for the overlap asked (24 hours unless said; 0: it stops now)', access: 'signed-in',
    params: { id: webhookEndpointInPath },
    body: rotateSecretBody, ifMatch: true,
    conflicts: ['CONFLICT'],
    responses: { 200: { description: 'The endpoint and its new secret', body: webhookEndpointWithSecretRepresentation, headers: ['ETag'] } },
  },
  listWebhookDeliveries: {
    method: 'GET', path: '/webhook-endpoints/:id/deliveries', summary: "List an endpoint's deliveries with their attempts, status codes and latency", access: 'signed-in',
    params: { id: webhookEndpointInPath },
    query: listDeliveriesQuery, sortFields: endpointSortFields,
    responses: { 200: { description: 'A page of deliveries', body: webhookDeliveryPageRepresentation } },
  },
  retryWebhookDelivery: {
    method: 'POST', path: '/webhook-endpoints/:id/deliveries/:deliveryId/retry', summary: 'Send a delivery again now', access: 'signed-in', policy: 'webhook-retry',
    params: { id: webhookEndpointInPath, deliveryId: resourceId('Delivery') },
    conflicts: ['CONFLICT'],
    responses: { 202: { description: 'The delivery, due now', body: webhookDeliveryRepresentation } },
  },
  listEvents: {
    method: 'GET', path: '/events', summary: 'List events about your resources (every event for admins), newest first; kept 30 days', access: 'signed-in',
    query: listEventsQuery, sortFields: eventSortFields,
    responses: { 200: { description: 'A page of events', body: webhookEventPageRepresentation } },
  },
});

export function webhookRoutes(webhooks: WebhookService) {
  return webhookEndpoints.routes({
    createWebhookEndpoint: async ({ principal, body, res }) => {
      const endpoint = await webhooks.create(principal, body);
      // The secret is in this answer only: nothing may keep a copy of it.
      res.status(201).location(publicPath('webhook-endpoints', endpoint.id)).setHeader('ETag', etagOf(endpoint)).setHeader('Cache-Control', 'no-store').json(toEndpointWithSecretResponse(endpoint));
    },
    listWebhookEndpoints: async ({ principal, query, res }) => {
      res.json(mapListItems(await webhooks.list(principal, query), toEndpointResponse));
    },
    getWebhookEndpoint: async ({ principal, params, res }) => {
      const endpoint = await webhooks.get(principal, params.id);
      res.setHeader('ETag', etagOf(endpoint)).json(toEndpointResponse(endpoint));
    },
    updateWebhookEndpoint: async ({ principal, params, body, expectedVersion, res }) => {
      const endpoint = await webhooks.patch(principal, params.id, body, expectedVersion);
      res.setHeader('ETag', etagOf(endpoint)).json(toEndpointResponse(endpoint));
    },
    deleteWebhookEndpoint: async ({ principal, params, expectedVersion, res }) => {
      await webhooks.delete(principal, params.id, expectedVersion);
      res.status(204).end();
    },
    rotateWebhookSecret: async ({ principal, params, body, expectedVersion, res }) => {
      const endpoint = await webhooks.rotateSecret(principal, params.id, body?.overlapSeconds, expectedVersion);
      res.setHeader('ETag', etagOf(endpoint)).setHeader('Cache-Control', 'no-store').json(toEndpointWithSecretResponse(endpoint));
    },
    listWebhookDeliveries: async ({ principal, params, query, res }) => {
      res.json(mapListItems(await webhooks.listDeliveries(principal, params.id, query), toDeliveryResponse));
    },
    retryWebhookDelivery: async ({ principal, params, res }) => {
      res.status(202).json(toDeliveryResponse(await webhooks.retryDelivery(principal, params.id, params.deliveryId)));
    },
    listEvents: async ({ principal, query, res }) => {
      res.json(mapListItems(await webhooks.listEvents(principal, query), toEventResponse));
    },
  });
}
