// In-process wake-ups around one database's outbox, in place of a NOTIFY per write (which takes
// PostgreSQL's global notification lock at every commit, and which each write paid for): a unit of
// work that recorded events wakes the relay once it committed, and a relay that published wakes the
// event log's long-polling readers. Keyed by the database client object, so two services in one
// process (tests, benches) wake only their own. A wake that is missed (another replica's commit, a
// write outside `unitOfWork`) costs at most one poll interval: every waiter polls besides.
import type { SqlClient } from './outbox';

type OutboxMoment = 'committed' | 'published';

const listeners = new WeakMap<object, Map<OutboxMoment, Set<() => void>>>();
/** Transaction clients that recorded at least one event (recordEvent adds them). */
const transactionsWithEvents = new WeakSet<object>();

/** Calls `listener` each time `moment` happens on `db`'s outbox in this process; returns the function that stops. */
export function onOutbox(db: object, moment: OutboxMoment, listener: () => void): () => void {
  let byMoment = listeners.get(db);
  if (!byMoment) listeners.set(db, (byMoment = new Map()));
  let set = byMoment.get(moment);
  if (!set) byMoment.set(moment, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

export function signalOutbox(db: object, moment: OutboxMoment): void {
  for (const listener of listeners.get(db)?.get(moment) ?? []) listener();
}

export function noteEventRecorded(tx: SqlClient): void {
  transactionsWithEvents.add(tx);
}

/** A database whose interactive transactions hand `work` a `Tx` (a Prisma client: its transaction client). */
interface TransactionalDatabase<Tx> {
  $transaction<R>(work: (tx: Tx) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R>;
}

/**
 * Runs `work` in one transaction of `db` (a Prisma client): the unit of work of a use case. When
 * it recorded events and committed, the database's relay is woken at once to publish them.
 */
export async function unitOfWork<Tx extends SqlClient, R>(db: TransactionalDatabase<Tx>, work: (tx: Tx) => Promise<R>, options?: { maxWait?: number; timeout?: number }): Promise<R> {
  let recorded = false;
  const result = await db.$transaction(async (tx) => {
    const value = await work(tx);
    recorded = transactionsWithEvents.has(tx);
    return value;
  }, options);
  if (recorded) signalOutbox(db, 'committed');
  return result;
}
