// Rules of the users resource: sign-up, credentials, who may read or change whom.
import { assertOwnerOrAdmin, issueAccessToken, type Principal, requireAdmin } from '@platform/auth';
import { Conflict, NotFound, Unauthenticated } from '@platform/errors';
import { domainEvent } from '@platform/events';
import { isId, newId } from '@platform/ids';
import { type ListEnvelope, parseSort, toListEnvelope, toPageRequest } from '@platform/paging';
import { unchangedAtVersion, updateAtVersion } from '@platform/service-kit';
import type { RevocationPublisher } from '../credentials/revocations';
import { decoyHash, hashPassword, verifyPassword } from './password';
import { whenUniqueViolated } from '@platform/db';
import { daySpan, pathId } from '@platform/validation';
import { userEvent } from './events';
import { changesNothing, type UserChanges, type UserProfile, type UserRepository, UserRepository as Repo, type UserRow } from './repository';
import type { TokenResponse } from './representation';
import { type ListUsersQuery, type PatchUserInput, type ReplaceUserInput, type SignUpInput, userSortFields } from './schemas';

export interface UserServiceSettings {
  jwtSecret: string;
  cursorSecret: string;
  accessTokenTtlS: number;
  /** Where password changes and deletions are pushed for the gateways; unset: they rely on their cache bound and what they see pass. */
  revocations?: RevocationPublisher;
}

function emailTaken(): Conflict {
  return new Conflict('EMAIL_TAKEN', 'An account with this email already exists.', [{ field: 'email', code: 'NOT_ALLOWED', message: 'This email is already registered.' }]);
}

/** A whole profile (sign-up, PUT): what is not sent is cleared. */
function profileOf(input: ReplaceUserInput): UserProfile {
  return {
    name: input.name,
    email: input.email,
    phone: input.phone ?? null,
    address: input.address ?? null,
    nickname: input.nickname ?? null,
    marketingAgreed: input.marketingAgreed ?? false,
  };
}

export class UserService {
  constructor(
    private readonly users: UserRepository,
    private readonly settings: UserServiceSettings,
  ) {}

  async signUp(input: SignUpInput, role: 'customer' | 'admin' = 'customer'): Promise<UserRow> {
    // A taken e-mail is refused before the password is hashed (tens of milliseconds of CPU and
    // 32 MiB): repeating a sign-up of a taken e-mail must not be a cheap way to spend them. The
    // answer tells no more than the 409 already does. The unique index still decides a race.
    if (await this.users.findByEmail(input.email)) throw emailTaken();
    const passwordHash = await hashPassword(input.password);
    return whenUniqueViolated(
      this.users.unitOfWork(async (writes) => {
        // One clock reading for the user's createdAt and its user.created's time: left to
        // themselves, the event took the transaction's start and the row a later time.
        const createdAt = new Date();
        const user = await writes.create({ id: newId(), ...profileOf(input), role, passwordHash, createdAt });
        await writes.recordEvent(userEvent('user.created', user, createdAt));
        return user;
      }),
      emailTaken,
    );
  }

  /** The same answer for an unknown email and a wrong password, in about the same time. */
  async issueToken(email: string, password: string): Promise<TokenResponse> {
    const user = await this.users.findByEmail(email);
    const valid = await verifyPassword(password, user?.passwordHash ?? (await decoyHash));
    if (!user || !valid) throw new Unauthenticated('The email or password is wrong.', 'INVALID_CREDENTIALS');
    await this.users.touchLastLogin(user.id, new Date());
    return issueAccessToken(this.settings.jwtSecret, { userId: user.id, role: user.role, credentialVersion: user.credentialVersion }, this.settings.accessTokenTtlS);
  }

  /** The user (`me`: the caller), if the principal may see it; a malformed id is 404 like an unknown one (GraphQL's `user(id:)` sends it unchecked). */
  async get(principal: Principal, id: string): Promise<UserRow> {
    const userId = pathId(id === 'me' ? principal.userId : id, 'User');
    assertOwnerOrAdmin(principal, userId, 'User');
    const user = await this.users.findById(userId);
    if (!user) throw NotFound.of('User');
    return user;
  }

  /** Users visible to the principal among `ids`, for batched GraphQL references. */
  async getMany(principal: Principal, ids: readonly string[]): Promise<Map<string, UserRow>> {
    const visible = ids.filter((id) => isId(id) && (principal.role === 'admin' || id === principal.userId));
    const rows = visible.length ? await this.users.findByIds(visible) : [];
    return new Map(rows.map((row) => [row.id, row]));
  }

  async list(principal: Principal, query: ListUsersQuery): Promise<ListEnvelope<UserRow>> {
    requireAdmin(principal);
    const { size, cursor, page, offset, limit, withTotal, sort: sortParam, ...filterParams } = query;
    const sort = parseSort(sortParam, userSortFields, { field: 'createdAt', direction: 'desc' });
    const pageRequest = toPageRequest({ size, cursor, page, offset, limit, withTotal }, { list: 'users', sort, filters: filterParams, secret: this.settings.cursorSecret });
    const created = daySpan(filterParams.createdFrom, filterParams.createdTo);
    const { rows, total } = await this.users.list(
      {
        email: filterParams.email || undefined,
        namePrefix: filterParams.name,
        marketingAgreed: filterParams.marketingAgreed,
        createdFrom: created.from,
        createdBefore: created.before,
      },
      pageRequest,
    );
    return toListEnvelope(rows, pageRequest, { secret: this.settings.cursorSecret, sortValue: (row) => Repo.sortValue(row, sort.field), totalCount: total });
  }

  async patch(principal: Principal, id: string, input: PatchUserInput, expectedVersion?: number): Promise<UserRow> {
    const { password, ...profile } = input;
    const changes: UserChanges = { ...profile };
    if (password !== undefined) {
      // Whether the caller may change this user is known before a password is hashed (tens of
      // milliseconds of CPU): a refused request must not be a way to spend them.
      await this.get(principal, id);
      // In the same write: every token issued before this change is refused from now on.
      Object.assign(changes, { passwordHash: await hashPassword(password), revokeTokens: true });
    }
    const updated = await this.update(principal, id, changes, expectedVersion);
    if (password !== undefined) await this.settings.revocations?.publish({ userId: updated.id, credentialVersion: updated.credentialVersion });
    return updated;
  }

  async replace(principal: Principal, id: string, input: ReplaceUserInput, expectedVersion?: number): Promise<UserRow> {
    return this.update(principal, id, profileOf(input), expectedVersion);
  }

  /** Deletes the user; with `expectedVersion` (If-Match) only at that version, as a change is made. */
  async delete(principal: Principal, id: string, expectedVersion?: number): Promise<void> {
    const user = await this.get(principal, id);
    await updateAtVersion(
      'user',
      user.version,
      expectedVersion,
      (version) =>
        this.users.unitOfWork(async (writes) => {
          if (!(await writes.delete(user.id, expectedVersion === undefined ? undefined : version))) return null;
          // Read once the row went: a delete that waited for a concurrent update's lock happens after that update.
          await writes.recordEvent(domainEvent('user.deleted', user.id, { id: user.id }, new Date()));
          return true;
        }),
      { explainLostRace: async () => NotFound.of('User') }, // unconditional: only a delete beside it leaves nothing to delete
    );
    await this.settings.revocations?.publish({ userId: user.id, credentialVersion: null });
  }

  /** The user's current credential version, or null when the user no longer exists (the gateway's revocation check). */
  async credentialVersionOf(id: string): Promise<number | null> {
    return isId(id) ? ((await this.users.findById(id))?.credentialVersion ?? null) : null;
  }

  /** Creates the configured admin once; a restart finds it and changes nothing. */
  async bootstrapAdmin(email: string, password: string): Promise<'created' | 'exists'> {
    if (await this.users.findByEmail(email)) return 'exists';
    try {
      await this.signUp({ name: 'Administrator', email, password }, 'admin');
      return 'created';
    } catch (error) {
      if (error instanceof Conflict && error.code === 'EMAIL_TAKEN') return 'exists';
      throw error;
    }
  }

  private async update(principal: Principal, id: string, changes: UserChanges, expectedVersion?: number): Promise<UserRow> {
    const current = await this.get(principal, id);
    if (changesNothing(current, changes)) return unchangedAtVersion(current, expectedVersion);
    return updateAtVersion('user', current.version, expectedVersion, (version) =>
      whenUniqueViolated(
        this.users.unitOfWork(async (writes) => {
          // One clock reading for the user's updatedAt and its user.updated's time.
          const at = new Date();
          const updated = await writes.updateVersioned(current.id, version, changes, at);
          if (updated) await writes.recordEvent(userEvent('user.updated', updated, at));
          return updated;
        }),
        emailTaken,
      ),
    );
  }
}
