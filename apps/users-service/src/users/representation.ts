// The public shape of a user (REST and GraphQL). The password hash never leaves this module.
import type { UserRow } from './repository';

export interface UserResponse {
  id: string;
  name: string;
  email: string;
  phone: string | null;
  address: { zipCode: string | null; line1: string | null; line2: string | null } | null;
  nickname: string | null;
  marketingAgreed: boolean;
  role: string;
  createdAt: string;
  lastLoginAt: string | null;
}

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
