// Identifiers: UUIDv7 strings. Time-ordered (new rows land at the end of B-tree indexes and sort
// by creation), 74 random bits (unguessable), and a native `uuid` column in PostgreSQL.
import { v7 as uuidv7, validate, version } from 'uuid';

export function newId(): string {
  return uuidv7();
}

/** True for a canonical UUID string; a path id that fails this is answered 404 without a query (`pathId`, libs/validation). */
export function isId(value: unknown): value is string {
  return typeof value === 'string' && validate(value) && value === value.toLowerCase() && version(value) === 7;
}
