// The events users-service records about a user: the public profile's identity fields, never
// its credentials (the schemas in libs/events refuse any other field).
import { domainEvent, type DomainEvent } from '@platform/events';
import type { UserRow } from './repository';

/** `at`: the use case's clock reading the row was written with (its createdAt, or its updatedAt), the event's time. */
export function userEvent(type: 'user.created' | 'user.updated', row: UserRow, at: Date): DomainEvent {
  return domainEvent(type, row.id, { id: row.id, role: row.role, name: row.name, email: row.email, version: row.version, createdAt: row.createdAt.toISOString() }, at);
}
