// Identifiers: UUIDv7 strings. Time-ordered (new rows land at the end of B-tree indexes and sort
// by creation), 74 random bits (unguessable), and a native `uuid` column in PostgreSQL.
import { v7 as uuidv7, validate, version } from 'uuid';

export function newId(): string {
  return uuidv7();
}

/**
 * An id in its canonical form, the one stored and answered: lowercase, as a UUID is read in any
 * case (RFC 9562 §4). What names the same resource as an id sent in another case (a cache of the
 * answers for a user, a revoked key) is kept by this form too.
 */
export function canonicalId(value: string): string {
  return value.toLowerCase();
}

/**
 * True for an id in its canonical form, a lowercase UUIDv7: the form stored and answered. Input
 * in another case is made canonical (canonicalId) before this check (`idField`, libs/validation); a path id that
 * fails it is answered 404 without a query (`pathId`).
 */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && validate(value) && value === value.toLowerCase() && version(value) === 7;
}
