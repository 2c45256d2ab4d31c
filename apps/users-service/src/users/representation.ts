// The public shape of a user (REST and GraphQL). The password hash never leaves this module.
// The schema is what the OpenAPI document publishes; the mapper is typed by it, so they agree.
import { roles } from '@platform/auth';
import { component } from '@platform/endpoints';
import { listEnvelopeSchema } from '@platform/paging';
import { idField, z } from '@platform/validation';
import type { UserRow } from './repository';

export const userRepresentation = component('User', z.object({
  id: idField(),
  name: z.string(),
  email: z.email(),
  phone: z.string().nullable(),
  address: z.object({ zipCode: z.string().nullable(), line1: z.string().nullable(), line2: z.string().nullable() }).nullable(),
  nickname: z.string().nullable(),
  marketingAgreed: z.boolean(),
  role: z.enum(roles),
  createdAt: z.iso.datetime(),
  lastLoginAt: z.iso.datetime().nullable(),
}));

export const userPageRepresentation = component('UserPage', listEnvelopeSchema(userRepresentation));

export type UserResponse = z.infer<typeof userRepresentation>;

/** POST /tokens: a bearer token for the Authorization header. */
export const tokenRepresentation = component('Token', z.object({
  accessToken: z.string(),
  tokenType: z.literal('Bearer'),
  expiresIn: z.number().int().min(1).meta({ description: 'Seconds until the token expires.' }),
}));

export type TokenResponse = z.infer<typeof tokenRepresentation>;

export function toUserResponse(row: UserRow): UserResponse {
  const hasAddress = row.addressZipCode !== null || row.addressLine1 !== null || row.addressLine2 !== null;
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    phone: row.phone,
    address: hasAddress ? { zipCode: row.addressZipCode, line1: row.addressLine1, line2: row.addressLine2 } : null,
    nickname: row.nickname,
    marketingAgreed: row.marketingAgreed,
    role: row.role,
    createdAt: row.createdAt.toISOString(),
    lastLoginAt: row.lastLoginAt?.toISOString() ?? null,
  };
}

export function etagOf(row: UserRow): string {
  return `"${row.version}"`;
}
