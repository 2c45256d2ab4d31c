// GET /v1/deprecations (admin): every entry of the deprecation registry with its dates and who
// still uses it (client name/version, user or key, the key's owner, calls in the last 1, 7 and
// 30 days, last seen, and the email of the user behind the caller, asked of users-service with the
// admin's own token). GET /v1/me/deprecations: the same for the caller's own use only, the
// entries it used in the last 30 days. Both read the shared usage store (libs/usage).
import type { RequestHandler } from 'express';
import { ApiError } from '@platform/errors';
import { mayHaveUsed, type Deprecation } from '@platform/deprecations';
import type { HttpTarget } from '@platform/outgoing-calls';
import { dayOf, type CallerUse, UsageReports, type UsageStore } from '@platform/usage';
import { callerIdentityOf } from '../callers/caller-identity';

export interface DeprecationUsage {
  element: string;
  replacement: string;
  announced: string;
  sunset: string;
  notice: string;
  callers: { element: string; caller: string; client: string; owner: string | null; contact: string | null; calls1d: number; calls7d: number; calls30d: number; lastSeen: string }[];
}

/** Users whose email one report asks for, at most: a report past it names the rest by id only. */
const MAX_CONTACTS = 100;
const CONTACT_TIMEOUT_MS = 2_000;

function callerOf(use: CallerUse): DeprecationUsage['callers'][number] {
  return { element: use.element, caller: use.caller, client: use.client, owner: use.owner ?? null, contact: null, calls1d: use.calls1d, calls7d: use.calls7d, calls30d: use.calls30d, lastSeen: use.lastUsed };
}

/** The user id behind a caller: a key's owner, or the user itself. */
const userBehind = (caller: DeprecationUsage['callers'][number]): string | undefined => /^user:(.+)$/.exec(caller.owner ?? caller.caller)?.[1];

/**
 * Fills in `contact` with each user's email, read from users-service as the admin who asked
 * (GET /users/{id}, their own token): a user gone or an answer that does not come leaves it null,
 * never fails the report.
 */
async function addContacts(items: DeprecationUsage[], users: HttpTarget, authorization: string | undefined): Promise<void> {
  if (!authorization) return;
  const ids = [...new Set(items.flatMap((item) => item.callers.map(userBehind)).filter((id): id is string => id !== undefined))].slice(0, MAX_CONTACTS);
  const emails = new Map<string, string>();
  await Promise.all(
    ids.map(async (id) => {
      try {
        const answer = await users.request({ operation: 'user-contact', path: `/users/${encodeURIComponent(id)}`, headers: { accept: 'application/json' }, credential: 'caller', authorization, timeoutMs: CONTACT_TIMEOUT_MS, json: true });
        const user = answer.status < 300 ? (answer.body as { email?: unknown }) : undefined;
        if (typeof user?.email === 'string') emails.set(id, user.email);
      } catch {
        // No answer in time: the report names the caller by id.
      }
    }),
  );
  for (const caller of items.flatMap((item) => item.callers)) caller.contact = emails.get(userBehind(caller) ?? '') ?? null;
}

/** Seconds a caller is told to wait when the store does not answer: about its reconnect and command timeout. */
const STORE_RETRY_AFTER_S = '5';

/**
 * Each registry entry with the uses that may be of its element (mayHaveUsed: its parts, and what
 * holds it in an answer). A store that does not answer (Redis down or hung) is 503 with
 * Retry-After, as the gateway answers whatever it cannot look up right now: an empty report would
 * tell an operator that nobody uses a deprecated element.
 */
export async function deprecationUsage(reports: UsageReports, registry: Deprecation[], options: { today: string; caller?: string }): Promise<DeprecationUsage[]> {
  let uses: CallerUse[];
  try {
    // The store's reads are shared by all reports; a caller's own report combines its own uses only.
    uses = await reports.usage({ today: options.today, wanted: (element) => registry.some((entry) => mayHaveUsed(entry.element, element)), elements: registry.map((entry) => entry.element).join('\n'), caller: options.caller });
  } catch (error) {
    throw new ApiError('SERVICE_UNAVAILABLE', 'Usage records cannot be read right now; retry shortly.', { cause: error, headers: { 'Retry-After': STORE_RETRY_AFTER_S } });
  }
  return registry.map((entry) => ({
    element: entry.element,
    replacement: entry.replacement,
    announced: entry.announced,
    sunset: entry.sunset,
    notice: entry.notice,
    callers: uses.filter((use) => mayHaveUsed(entry.element, use.element)).map(callerOf),
  }));
}

/** The two routes' handler (upstream `usage` in the route table; the admin's route is refused to others by dispatch, from its declaration); `registry` is read per request so an edited file counts at once. */
export function deprecationReports(store: UsageStore, registry: () => Deprecation[], users: HttpTarget): RequestHandler {
  const reports = new UsageReports(store);
  return async (req, res) => {
    const today = dayOf(Date.now());
    let items: DeprecationUsage[];
    if (req.path.replace(/\/$/, '').endsWith('/me/deprecations')) {
      items = (await deprecationUsage(reports, registry(), { today, caller: callerIdentityOf(req, res).caller })).filter((entry) => entry.callers.length > 0);
    } else {
      items = await deprecationUsage(reports, registry(), { today });
      await addContacts(items, users, req.headers.authorization);
    }
    res.json({ items, nextCursor: null, hasNext: false });
  };
}
