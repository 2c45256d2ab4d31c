// Who publishes events and whose events each service reads: the one list the services' consumers
// are wired from (each app's main.ts takes `subscriptionOf(<itself>)`) and the prod broker's
// authorization is generated from (libs/events/src/nats-permissions.ts, written into
// deploy/k8s/overlays/prod/nats.yaml by tools/deploy/render-nats-auth.ts). A consumer added here
// without regenerating the manifest fails `check-generated`; one wired in main.ts by hand fails
// deploy/validation.
/** The services that publish events, each under its own name (`events.<service>.…`) and as its own broker user. */
export const eventServices = ['users-service', 'orders-service', 'catalog-service', 'inventory-service'] as const;
export type EventService = (typeof eventServices)[number];

/** Per service, the producers whose events its EventConsumer reads; in this order it makes its durable consumers. */
export const eventSubscriptions: Readonly<Record<EventService, readonly EventService[]>> = {
  // Webhooks and GET /v1/events carry every service's events (apps/users-service/src/webhooks).
  'users-service': eventServices,
  'orders-service': ['users-service'],
  'catalog-service': ['users-service'],
  'inventory-service': [],
};

/** The consumer and sources of `service`'s EventConsumer. */
export function subscriptionOf(service: EventService): { consumer: EventService; sources: readonly EventService[] } {
  return { consumer: service, sources: eventSubscriptions[service] };
}
