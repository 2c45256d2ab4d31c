// What a service serves other services about its events, as one mount of createService's
// `internal`: GET /internal/events (the events it published, read by the embedded transport) and,
// when it consumes events, /internal/dead-letters (what its consumer parked, to list and replay).
// Each route checks the service token itself (the internal audience).
import type { TokenVerifier } from '@platform/auth';
import type { Logger } from '@platform/service-kit';
import { Router } from 'express';
import { deadLettersOf } from './consumer';
import { deadLetterRoutes, type EventHandlers } from './dead-letters';
import { eventLogRoutes } from './embedded-transport';
import { type DatabaseKind, isSharedDatabase, type SqlClient } from './outbox';

export interface EventRoutesOptions {
  db: SqlClient;
  /** The service's name, the source of its events (`users-service`). */
  service: string;
  /** Service tokens (audience `internal`). */
  internalVerifier: TokenVerifier;
  /** The service's consumer: its handlers replay a parked event. Without one, no dead-letter door. */
  consumer?: { handlers: EventHandlers; logger: Logger };
  /** Embedded (`pglite`): a waiting read of its log is woken by this process alone. Unset: shared. */
  databaseKind?: DatabaseKind;
}

export function eventRoutes({ db, service, internalVerifier, consumer, databaseKind }: EventRoutesOptions): Router {
  const router = Router();
  router.use(eventLogRoutes(db, service, internalVerifier, { sharedDatabase: isSharedDatabase(databaseKind) }));
  if (consumer) router.use(deadLetterRoutes(deadLettersOf(db, consumer.handlers, consumer.logger), internalVerifier));
  return router;
}
