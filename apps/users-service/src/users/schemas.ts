// Request shapes of the users resource. Unknown fields and parameters are refused.
import { pagingQueryShape } from '@platform/paging';
import { canonicalId, isId } from '@platform/ids';
import { displayName, isoDate, queryBoolean, resourceKey, z } from '@platform/validation';

/**
 * The user a path names: an id, or `me` for the caller (the service reads `me` as the caller's id).
 * An id in any case is read in its canonical form (canonicalId), as idField reads one; `me` is only `me`.
 */
export const userInPath = resourceKey(
  z.string().overwrite((id) => (isId(canonicalId(id)) ? canonicalId(id) : id)).refine((id) => id === 'me' || isId(id)).meta({ description: 'A user id, or `me` for the caller.' }),
  'User',
);

const name = displayName({ max: 100 });
const email = z.email().max(254);
const phone = z.string().regex(/^\+?[\d\s-]{6,20}$/, { error: 'phone must be digits, spaces or dashes, optionally starting with +' });
const nickname = displayName({ max: 50 });
const address = z.strictObject({ zipCode: z.string().max(16), line1: z.string().max(200), line2: z.string().max(200).nullable().optional() });

export const password = z.string().min(10).max(200);

export const signUpBody = z.strictObject({
  name,
  email,
  password,
  phone: phone.nullable().optional(),
  address: address.nullable().optional(),
  nickname: nickname.nullable().optional(),
  marketingAgreed: z.boolean().optional(),
});

/** PUT: the whole user (a sign-up without the password). What is not sent is cleared. */
export const replaceUserBody = signUpBody.omit({ password: true });

/** PATCH: only the fields sent change; `password` changes the credential. */
export const patchUserBody = z.strictObject({
  name: name.optional(),
  email: email.optional(),
  password: password.optional(),
  phone: phone.nullable().optional(),
  address: address.nullable().optional(),
  nickname: nickname.nullable().optional(),
  marketingAgreed: z.boolean().optional(),
});

export const tokenBody = z.strictObject({ email: z.string().min(1).max(254), password: z.string().min(1).max(200) });

export const userSortFields = ['createdAt', 'name', 'email'] as const;

export const listUsersQuery = z.strictObject({
  ...pagingQueryShape,
  email: z.string().max(254).optional(),
  name: z.string().min(1).max(100).optional(),
  marketingAgreed: queryBoolean().optional(),
  createdFrom: isoDate().optional(),
  createdTo: isoDate().optional(),
});

export type SignUpInput = z.output<typeof signUpBody>;
export type ReplaceUserInput = z.output<typeof replaceUserBody>;
export type PatchUserInput = z.output<typeof patchUserBody>;
export type ListUsersQuery = z.output<typeof listUsersQuery>;
