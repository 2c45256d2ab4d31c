// Idempotency wraps a use case, it does not live inside it: `idempotent(store, useCase, answerOf)`
// is the use case once per Idempotency-Key. The first request with a key runs it, and its answer
// (`answerOf` its result) is stored by the use case's own unit of work, with the change it
// describes: a crash between the two cannot leave an order whose key a retry would run again.
// A retry with the same key and input gets that answer back; the rules of claiming a key (another
// input: 422, a duplicate in flight: wait, then replay) are the store's (store.ts).
import type { Principal } from '@platform/auth';
import { ApiError } from '@platform/errors';
import type { IdempotencyKeyRepository } from './repository';
import { formerRequestHashOf, type IdempotencyStore, KEY_TTL_MS, requestHashOf } from './store';

/** What the first request with a key answered, stored for its retries. */
export interface IdempotentAnswer {
  status: number;
  body: unknown;
}

/** The use case's result when it ran, or the stored answer when the request is a replay. */
export type Once<R> = { kind: 'ran'; result: R } | { kind: 'replayed'; answer: IdempotentAnswer };

/** The writes of a unit of work that can store a key's answer (`OrderWrites` is one). */
export interface WritesWithKeys {
  readonly idempotencyKeys: IdempotencyKeyRepository;
}

/**
 * A use case that takes `alongside`: writes its caller adds to the unit of work that commits its
 * change, given that unit of work's writes and the result.
 */
export type UseCaseWithAlongside<I, R> = (principal: Principal, input: I, alongside?: (writes: WritesWithKeys, result: R) => Promise<void>) => Promise<R>;

/** The use case, run once per (user, key); without a key, every call runs. */
export type IdempotentUseCase<I, R> = (principal: Principal, input: I, idempotencyKey?: string) => Promise<Once<R>>;

export function idempotent<I, R>(store: IdempotencyStore, useCase: UseCaseWithAlongside<I, R>, answerOf: (result: R) => IdempotentAnswer): IdempotentUseCase<I, R> {
  return async (principal, input, key) => {
    if (!key) return { kind: 'ran', result: await useCase(principal, input) };
    const begun = await store.begin(principal.userId, key, requestHashOf(input), formerRequestHashOf(input));
    if (begun.kind === 'replay') return { kind: 'replayed', answer: { status: begun.status, body: begun.body } };
    try {
      const result = await useCase(principal, input, async (writes, ran) => {
        const { status, body } = answerOf(ran);
        // Thrown, the unit of work commits nothing: this request outlived its claim and a retry runs (or ran) in its place.
        if (!(await writes.idempotencyKeys.answer(principal.userId, key, begun.claimedAt, status, body, new Date(Date.now() + KEY_TTL_MS)))) {
          throw new ApiError('CONFLICT', 'This request outlived its deadline and a retry with its Idempotency-Key took over; that retry has the answer.', { headers: { 'Retry-After': '1' } });
        }
      });
      return { kind: 'ran', result };
    } catch (error) {
      // Nothing was committed: forget the key so a retry runs again.
      await store.abandon(principal.userId, key, begun.claimedAt);
      throw error;
    }
  };
}
