// GET /v1/deprecations (admin): every entry of the deprecation registry with its dates and who
// still uses it (client name/version, user or key, the key's owner, calls in the last 1, 7 and
// 30 days, last seen). GET /v1/me/deprecations: the same for the caller's own use only, the
// entries it used in the last 30 days. Both read the shared usage store (libs/usage).
import type { RequestHandler } from 'express';
import { principalOf, requireAdmin } from '@platform/auth';
import { covers, type Deprecation } from '@platform/deprecations';
import { dayOf, usageByCaller, type CallerUse, type UsageStore } from '@platform/usage';
import { callerIdentityOf } from '../callers/caller-identity';

export interface DeprecationUsage {
  element: string;
  replacement: string;
  announced: string;
  sunset: string;
  notice: string;
  callers: { element: string; caller: string; client: string; owner: string | null; calls1d: number; calls7d: number; calls30d: number; lastSeen: string }[];
}

function callerOf(use: CallerUse): DeprecationUsage['callers'][number] {
  return { element: use.element, caller: use.caller, client: use.client, owner: use.owner ?? null, calls1d: use.calls1d, calls7d: use.calls7d, calls30d: use.calls30d, lastSeen: use.lastUsed };
}

/** Each registry entry with the uses of its element (and of what it covers: an operation's parameters). */
export async function deprecationUsage(store: UsageStore, registry: Deprecation[], options: { today: string; caller?: string }): Promise<DeprecationUsage[]> {
  const uses = await usageByCaller(store, { today: options.today, wanted: (element) => registry.some((entry) => covers(entry.element, element)), caller: options.caller });
  return registry.map((entry) => ({
    element: entry.element,
    replacement: entry.replacement,
    announced: entry.announced,
    sunset: entry.sunset,
    notice: entry.notice,
    callers: uses.filter((use) => covers(entry.element, use.element)).map(callerOf),
  }));
}

/** The two routes' handler (upstream `usage` in the route table); `registry` is read per request so an edited file counts at once. */
export function deprecationReports(store: UsageStore, registry: () => Deprecation[]): RequestHandler {
  return async (req, res) => {
    const today = dayOf(Date.now());
    let items: DeprecationUsage[];
    if (req.path.replace(/\/$/, '').endsWith('/me/deprecations')) {
      items = (await deprecationUsage(store, registry(), { today, caller: callerIdentityOf(req, res).caller })).filter((entry) => entry.callers.length > 0);
    } else {
      requireAdmin(principalOf(res));
      items = await deprecationUsage(store, registry(), { today });
    }
    res.json({ items, nextCursor: null, hasNext: false });
  };
}
