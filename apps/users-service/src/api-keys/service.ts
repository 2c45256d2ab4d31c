// Rules of the api-keys resource: issuing (the key shown once, only its keyed hash kept), the
// per-user limit, rotation with an overlap, revocation pushed to the gateways, and the gateway's
// verification of a key it was sent.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { apiKeyIdOf, newApiKeyText, type Principal } from '@platform/auth';
import { Conflict, Invalid, NotFound } from '@platform/errors';
import { newId } from '@platform/ids';
import { type ListEnvelope, toListEnvelope, toPageRequest } from '@platform/paging';
import type { RevocationPublisher } from '../credentials/revocations';
import type { ApiKeyRepository, ApiKeyRow } from './repository';
import { statusOf } from './representation';
import type { CreateApiKeyInput, ListApiKeysQuery, RotateApiKeyInput } from './schemas';

/** Active keys one user may hold: enough for a key per deployment, few enough to review. */
export const MAX_ACTIVE_KEYS_PER_USER = 25;
/**
 * What is kept in clear to recognise a key: `opk_…` and its last 4 characters (of the checksum), as
 * GitHub shows tokens. The first characters were `opk_` and the top of the id's UUIDv7 timestamp,
 * the same for every key made within about 65 s. Four characters of a CRC of the key leave its
 * 190 random bits unguessable.
 */
const hintOf = (text: string): string => `opk_…${text.slice(-4)}`;

export interface ApiKeyServiceSettings {
  /** API_KEY_HASH_SECRET: the HMAC key of the stored hashes. */
  hashSecret: string;
  cursorSecret: string;
  revocations?: RevocationPublisher;
}

/** The gateway's answer about a key: who it acts for and what it may do, or why it does not work. */
export type ApiKeyVerification =
  | { valid: true; id: string; ownerId: string; role: 'customer' | 'admin'; credentialVersion: number; scopes: string[]; expiresAt: string | null }
  | { valid: false; reason: 'unknown' | 'revoked' | 'expired' };

export class ApiKeyService {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly settings: ApiKeyServiceSettings,
  ) {}

  /** A new key for the caller: the row, and the key text, which is never stored. */
  async create(principal: Principal, input: CreateApiKeyInput): Promise<{ row: ApiKeyRow; key: string }> {
    const now = new Date();
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
    if (expiresAt && expiresAt <= now) throw new Invalid('expiresAt must be in the future.', [{ field: 'expiresAt', code: 'OUT_OF_RANGE', message: 'expiresAt must be in the future.' }]);
    return this.keys.ownerTransaction(principal.userId, async (writes) => {
      const active = await writes.countActive(principal.userId, now);
      if (active >= MAX_ACTIVE_KEYS_PER_USER) {
        throw new Conflict('API_KEY_LIMIT_REACHED', `A user may hold at most ${MAX_ACTIVE_KEYS_PER_USER} active API keys; revoke one (DELETE /v1/api-keys/{id}) before creating another.`);
      }
      return this.issue(writes, { userId: principal.userId, name: input.name, scopes: input.scopes, expiresAt });
    });
  }

  async list(principal: Principal, query: ListApiKeysQuery): Promise<ListEnvelope<ApiKeyRow>> {
    const sort = { field: 'createdAt', direction: 'desc' } as const;
    const page = toPageRequest({ size: query.size, cursor: query.cursor }, { list: 'api-keys', sort, filters: { owner: principal.userId }, secret: this.settings.cursorSecret });
    const { rows } = await this.keys.list(principal.userId, page);
    return toListEnvelope(rows, page, { secret: this.settings.cursorSecret, sortValue: (row) => row.createdAt });
  }

  /**
   * The caller's key; anyone else's (admins' included: keys are personal) is 404 like an unknown
   * one. Here and below, `id` is as /api-keys/{id} checked it (one that is no UUID was answered
   * 404 there); nothing but those routes calls these.
   */
  async get(principal: Principal, id: string): Promise<ApiKeyRow> {
    const row = await this.keys.findOwned(principal.userId, id);
    if (!row) throw NotFound.of('API key');
    return row;
  }

  /** Revokes the key: every gateway refuses it within the push (a second) or at worst its cache bound. Repeating it changes nothing. */
  async revoke(principal: Principal, id: string): Promise<void> {
    const revoked = await this.keys.ownerTransaction(principal.userId, async (writes) => {
      const row = await writes.findOwned(principal.userId, id);
      if (!row) throw NotFound.of('API key');
      if (row.revokedAt) return false;
      await writes.revoke(id, new Date());
      return true;
    });
    if (revoked) await this.settings.revocations?.publish({ apiKeyId: id });
  }

  /**
   * A new key with the same name, scopes and expiry; the old one keeps working `overlapSeconds`
   * more (its expiry moves to then, never later than it was), so a caller can deploy the new key
   * before the old stops. An overlap of 0 stops the old key now. A key has at most one successor:
   * rotating it again is 409.
   */
  async rotate(principal: Principal, id: string, input: RotateApiKeyInput): Promise<{ row: ApiKeyRow; key: string }> {
    const now = new Date();
    const issued = await this.keys.ownerTransaction(principal.userId, async (writes) => {
      const old = await writes.findOwned(principal.userId, id);
      if (!old) throw NotFound.of('API key');
      const status = statusOf(old, now.getTime());
      if (status !== 'ACTIVE') throw new Conflict('API_KEY_NOT_ACTIVE', `This API key is ${status.toLowerCase()}; only an active key can be rotated. Create a new key instead.`);
      // A key rotated already works only to the end of its overlap (its expiry was moved there), so
      // a second successor would inherit that end and stop with it. Checked under the owner's lock
      // (ownerTransaction), so of two rotations racing, the second sees the first's successor.
      const successor = await writes.findSuccessor(principal.userId, old.id);
      if (successor) {
        throw new Conflict('API_KEY_NOT_ACTIVE', `This API key was already rotated and stops at the end of its overlap; rotate its successor (${successor.id}) instead, or create a new key.`);
      }
      // The new key counts like a created one; the key rotated does not (it is on its way out), so
      // an owner at the limit can still rotate, and only that one key is over it, for its overlap.
      // Without this, rotating again and again (the same key, its successor or another) added a
      // key per call, each living as long as its overlap.
      const othersActive = (await writes.countActive(principal.userId, now)) - 1;
      if (othersActive >= MAX_ACTIVE_KEYS_PER_USER) {
        throw new Conflict('API_KEY_LIMIT_REACHED', `A user may hold at most ${MAX_ACTIVE_KEYS_PER_USER} active API keys, the new key of a rotation included; revoke one (DELETE /v1/api-keys/{id}), or let a rotated key's overlap end, before rotating another.`);
      }
      const overlapEnd = new Date(now.getTime() + input.overlapSeconds * 1000);
      if (input.overlapSeconds === 0) await writes.revoke(old.id, now);
      else if (!old.expiresAt || old.expiresAt > overlapEnd) await writes.expire(old.id, overlapEnd);
      return this.issue(writes, { userId: principal.userId, name: old.name, scopes: old.scopes, expiresAt: old.expiresAt, rotatedFromId: old.id });
    });
    // A shortened expiry needs no push: gateways hold each key's expiry and refuse it from then on.
    if (input.overlapSeconds === 0) await this.settings.revocations?.publish({ apiKeyId: id });
    return issued;
  }

  /**
   * The gateway's check of a key it was sent (well-formed, checksum right). Compares keyed hashes
   * in constant time; notes the use at most once a minute.
   */
  async verify(key: string): Promise<ApiKeyVerification> {
    const id = apiKeyIdOf(key);
    const row = id ? await this.keys.findWithOwner(id) : null;
    if (!row || !timingSafeEqual(Buffer.from(row.keyHash, 'hex'), Buffer.from(this.hashOf(key), 'hex'))) return { valid: false, reason: 'unknown' };
    const status = statusOf(row);
    if (status !== 'ACTIVE') return { valid: false, reason: status === 'REVOKED' ? 'revoked' : 'expired' };
    await this.keys.touchLastUsed(row.id, new Date());
    return { valid: true, id: row.id, ownerId: row.userId, role: row.user.role, credentialVersion: row.user.credentialVersion, scopes: row.scopes, expiresAt: row.expiresAt?.toISOString() ?? null };
  }

  private async issue(writes: Parameters<Parameters<ApiKeyRepository['ownerTransaction']>[1]>[0], key: { userId: string; name: string; scopes: string[]; expiresAt: Date | null; rotatedFromId?: string }) {
    const id = newId();
    const text = newApiKeyText(id);
    const row = await writes.create({ id, ...key, keyHash: this.hashOf(text), hint: hintOf(text) });
    return { row, key: text };
  }

  /** HMAC, not a plain hash: a stolen table cannot be checked against guesses without the secret (docs/security.md). */
  private hashOf(key: string): string {
    return createHmac('sha256', this.settings.hashSecret).update(key).digest('hex');
  }
}
