// Dead letters: events a consumer gave up on (unreadable, or its handler failed `maxAttempts`
// times), parked in dead_letter_events in the consumer's own database so that the events behind
// them go on. Operators list them and replay one once its cause is fixed: over HTTP
// (GET /internal/dead-letters, POST /internal/dead-letters/{id}/replay, service tokens only) or
// with `npm run events:dead-letters`.
//
// Order: the parked event's aggregate is not held. Its later events are handled as they come, so
// a replay runs the parked event after them (a `user.deleted` replayed after nothing, or an
// `order.shipped` after a later `order.deleted`): the handler must make sense of it then, which
// handlers do as they are idempotent and read the current state. Replaying is the operator's
// decision, taken after looking at the aggregate (docs/runbook.md, EventsParked).
import { authenticate, type TokenVerifier } from '@platform/auth';
import { ApiError } from '@platform/errors';
import type { Logger } from '@platform/service-kit';
import { parseQuery, queryInt, z } from '@platform/validation';
import { Router } from 'express';
import type { EventType } from './catalog';
import { fromCloudEventJson, MalformedEvent, type ReceivedEvent } from './envelope';
import type { SqlClient } from './outbox';

export type EventHandlers = Partial<Record<EventType, (event: ReceivedEvent) => Promise<void>>>;

/**
 * The handler of a received event's `type` (as received, unread), if any. An event without one is
 * passed over before it is read: a type newer than this consumer, or a newer shape of one it
 * ignores, is not its to refuse.
 */
export function handlerOf(handlers: EventHandlers, type: unknown): ((event: ReceivedEvent) => Promise<void>) | undefined {
  return typeof type === 'string' && Object.hasOwn(handlers, type) ? handlers[type as EventType] : undefined;
}

export interface DeadLetter {
  id: string;
  source: string;
  type: string;
  event: unknown;
  error: string;
  attempts: number;
  parkedAt: Date;
  replayedAt: Date | null;
}

export type DeadLetterState = 'parked' | 'replayed' | 'all';

export type ReplayOutcome = { outcome: 'handled' | 'ignored'; letter: DeadLetter } | { outcome: 'failed'; letter: DeadLetter; error: string } | undefined;

interface DeadLetterRow {
  id: string;
  source: string;
  type: string;
  event: unknown;
  error: string;
  attempts: number;
  parked_at: Date | string;
  replayed_at: Date | string | null;
}

/** How long a resolved letter (replayed, or ignored on replay) stays listable before it is purged. */
export const RESOLVED_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

const COLUMNS = `id::text AS id, source, type, event, error, attempts, parked_at, replayed_at`;

function deadLetterOf(row: DeadLetterRow): DeadLetter {
  return {
    id: row.id,
    source: row.source,
    type: row.type,
    event: typeof row.event === 'string' ? JSON.parse(row.event) : row.event,
    error: row.error,
    attempts: Number(row.attempts),
    parkedAt: new Date(row.parked_at),
    replayedAt: row.replayed_at ? new Date(row.replayed_at) : null,
  };
}

/** The dead letters of one consuming service: parking, listing and replaying. */
export class DeadLetters {
  constructor(
    private readonly db: SqlClient,
    private readonly handlers: EventHandlers,
    private readonly logger: Logger,
    /** Records a replayed event as handled (the consumer's processed_events), so a late redelivery is a duplicate. */
    private readonly markHandled: (event: ReceivedEvent) => Promise<void>,
  ) {}

  /** Parks `event` (as received) with the reason; parking it again (a redelivery that failed again) updates the reason and attempts. */
  async park(event: Record<string, unknown>, error: string, attempts: number): Promise<void> {
    const id = typeof event.id === 'string' && /^[0-9a-f-]{36}$/i.test(event.id) ? event.id : null;
    this.logger.error({ eventId: event.id, type: event.type, error, attempts }, 'event parked as dead: an operator can replay it');
    await this.db.$executeRawUnsafe(
      `INSERT INTO dead_letter_events (id, source, type, event, error, attempts) VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4::jsonb, $5, $6)
       ON CONFLICT (id) DO UPDATE SET error = EXCLUDED.error, attempts = EXCLUDED.attempts, parked_at = now(), replayed_at = NULL`,
      id,
      String(event.source ?? '').slice(0, 100),
      String(event.type ?? '').slice(0, 100),
      JSON.stringify(event),
      error.slice(0, 2000),
      attempts,
    );
  }

  /** Dead letters, newest first: those waiting (`parked`, the default), those replayed, or all. */
  async list(state: DeadLetterState = 'parked', limit = 100): Promise<DeadLetter[]> {
    const where = state === 'parked' ? 'WHERE replayed_at IS NULL' : state === 'replayed' ? 'WHERE replayed_at IS NOT NULL' : '';
    const rows = await this.db.$queryRawUnsafe<DeadLetterRow[]>(`SELECT ${COLUMNS} FROM dead_letter_events ${where} ORDER BY parked_at DESC, id LIMIT $1`, limit);
    return rows.map(deadLetterOf);
  }

  /**
   * Hands a parked event to its handler again (an operator fixed the cause). Undefined when no
   * such event waits. When the handler fails again the event stays parked, with the new reason
   * and one more attempt; an event no handler here takes any more is marked replayed, ignored.
   * Two replays of one letter at once may both run the handler (handlers are idempotent); only
   * one marks it replayed, the other answers as if none waited.
   */
  async replay(id: string): Promise<ReplayOutcome> {
    if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
    const [row] = await this.db.$queryRawUnsafe<DeadLetterRow[]>(`SELECT ${COLUMNS} FROM dead_letter_events WHERE id = $1::uuid AND replayed_at IS NULL`, id);
    if (!row) return undefined;
    let handled: 'handled' | 'ignored';
    try {
      // Passed over unread as the consumer does (handlerOf): a letter parked before it did is cleared.
      const json = deadLetterOf(row).event as Record<string, unknown>;
      const handler = handlerOf(this.handlers, json.type);
      if (handler) {
        const event = fromCloudEventJson(json);
        await handler(event);
        await this.markHandled(event);
      }
      handled = handler ? 'handled' : 'ignored';
    } catch (error) {
      const reason = error instanceof MalformedEvent ? `still unreadable: ${error.message}` : error instanceof Error ? error.message : String(error);
      const [failed] = await this.db.$queryRawUnsafe<DeadLetterRow[]>(
        `UPDATE dead_letter_events SET error = $2, attempts = attempts + 1 WHERE id = $1::uuid RETURNING ${COLUMNS}`,
        id,
        reason.slice(0, 2000),
      );
      this.logger.warn({ eventId: id, error: reason }, 'a replayed dead letter failed again; it stays parked');
      return { outcome: 'failed', letter: deadLetterOf(failed), error: reason };
    }
    const [replayed] = await this.db.$queryRawUnsafe<DeadLetterRow[]>(`UPDATE dead_letter_events SET replayed_at = now() WHERE id = $1::uuid AND replayed_at IS NULL RETURNING ${COLUMNS}`, id);
    this.logger.info({ eventId: id, outcome: handled }, 'dead letter replayed');
    return replayed ? { outcome: handled, letter: deadLetterOf(replayed) } : undefined;
  }

  /**
   * Deletes up to `limit` letters resolved (replayed or ignored) before `before`, oldest first, so
   * one purge stays short. Parked letters stay whatever their age: they wait for an operator.
   */
  async purgeResolved(before: Date, limit: number): Promise<number> {
    return this.db.$executeRawUnsafe(
      `DELETE FROM dead_letter_events WHERE id IN (SELECT id FROM dead_letter_events WHERE replayed_at < $1::timestamptz ORDER BY replayed_at LIMIT $2)`,
      before.toISOString(),
      limit,
    );
  }
}

const listQuery = z.strictObject({
  state: z.enum(['parked', 'replayed', 'all']).optional(),
  limit: queryInt({ min: 1, max: 500 }).optional(),
});

const toResponse = (letter: DeadLetter) => ({
  id: letter.id,
  source: letter.source,
  type: letter.type,
  error: letter.error,
  attempts: letter.attempts,
  parkedAt: letter.parkedAt.toISOString(),
  replayedAt: letter.replayedAt?.toISOString() ?? null,
  event: letter.event,
});

/**
 * The operators' door to a consumer's dead letters (service tokens only, the internal audience):
 * GET /internal/dead-letters?state=parked|replayed|all&limit=n → `{items}`, newest first;
 * POST /internal/dead-letters/{id}/replay → 200 `{outcome, deadLetter}`; 404 when no such event
 * waits; 409 CONFLICT (the reason in the message) when its handler failed again.
 */
export function deadLetterRoutes(deadLetters: DeadLetters, internalVerifier: TokenVerifier): Router {
  const router = Router();
  router.use('/internal/dead-letters', authenticate(internalVerifier));
  router.get('/internal/dead-letters', async (req, res) => {
    const { state = 'parked', limit = 100 } = parseQuery(listQuery, req.query);
    res.set('Cache-Control', 'no-store');
    res.json({ items: (await deadLetters.list(state, limit)).map(toResponse) });
  });
  router.post('/internal/dead-letters/:id/replay', async (req, res) => {
    const replayed = await deadLetters.replay(String(req.params.id));
    if (!replayed) throw ApiError.notFound('Parked event');
    if (replayed.outcome === 'failed') throw new ApiError('CONFLICT', `The event's handler failed again; it stays parked: ${replayed.error}`);
    res.json({ outcome: replayed.outcome, deadLetter: toResponse(replayed.letter) });
  });
  return router;
}
