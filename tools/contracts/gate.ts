// The gate's verdict: which breaking changes may pass (spec §Versioning 4-5 and issue #27's three
// ways), whether the deprecation registry and the approvals are well formed, and whether every
// meaning change has its changelog entry.
import { asDate, covers, mayHaveUsed, type Deprecation } from '@platform/deprecations';
import { specRule, type ContractChange } from './changes';

export interface Approval {
  element: string;
  rule?: string;
  reason: string;
  /** Who approved it: an API owner (CODEOWNERS gives contracts/ to them, so the file is reviewed). */
  approvedBy: string;
  /** YYYY-MM-DD, the day it was approved. */
  approved: string;
  expires: string;
}

/** Longest an approval may last: an exception, not a standing permission. */
export const MAX_APPROVAL_DAYS = 90;

/** What the usage store exports (docs/evolving-the-api.md, "Usage export"). */
export interface UsageExport {
  generatedAt: string;
  /** The first day the store has complete records for. */
  recordedSince: string;
  elements: Record<string, { lastUsed?: string | null; callers?: { caller: string; lastUsed?: string; calls?: number }[] }>;
}

export interface Verdict {
  change: ContractChange;
  /** For breaking changes: why it may pass, or why not. */
  allowed: boolean;
  reason: string;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/**
 * Reads contracts/approvals.yaml. An approval names the element, a reason, who approved it, the
 * day and an expiry at most MAX_APPROVAL_DAYS later; one without them, dated after `today`, or
 * expiring before it was given or past the bound is a problem (the gate fails) and allows nothing.
 */
export function readApprovals(raw: unknown, today: string): { entries: Approval[]; problems: string[] } {
  const entries: Approval[] = [];
  const problems: string[] = [];
  const list = (raw as { approvals?: unknown } | null)?.approvals ?? [];
  if (!Array.isArray(list)) return { entries, problems: ['approvals.yaml: `approvals` must be a list'] };
  list.forEach((item: Record<string, unknown>, index) => {
    const label = `approvals.yaml entry ${index + 1}`;
    const element = text(item?.element);
    const reason = text(item?.reason);
    const approvedBy = text(item?.approvedBy);
    const approved = asDate(item?.approved);
    const expires = asDate(item?.expires);
    if (!element || !reason || !approvedBy || !approved || !expires) {
      problems.push(`${label}: needs element, reason, approvedBy, approved (YYYY-MM-DD) and expires (YYYY-MM-DD)`);
      return;
    }
    const latest = daysBefore(approved, -MAX_APPROVAL_DAYS);
    const problem =
      approved > today ? `approved ${approved} is after today (${today})`
      : expires < approved ? `expires ${expires} before it was approved (${approved})`
      : expires > latest ? `expires ${expires}, more than ${MAX_APPROVAL_DAYS} days after it was approved (${approved}); the latest is ${latest}`
      : undefined;
    if (problem) {
      problems.push(`${label}: ${problem}`);
      return;
    }
    entries.push({ element, reason, approvedBy, approved, expires, ...(text(item.rule) ? { rule: text(item.rule) } : {}) });
  });
  return { entries, problems };
}

/** Reads a usage export (the usage store's, given with --usage); a malformed one is a problem, not zero use. */
export function readUsage(raw: unknown): { usage?: UsageExport; problems: string[] } {
  const candidate = raw as Partial<UsageExport> | null;
  const generatedAt = typeof candidate?.generatedAt === 'string' && !Number.isNaN(Date.parse(candidate.generatedAt)) ? candidate.generatedAt : undefined;
  const recordedSince = asDate(candidate?.recordedSince);
  const elements = candidate?.elements;
  if (!generatedAt || !recordedSince || typeof elements !== 'object' || elements === null || Array.isArray(elements)) {
    return { problems: ['usage export: needs generatedAt (ISO time), recordedSince (YYYY-MM-DD) and elements (an object by element name)'] };
  }
  return { usage: { generatedAt, recordedSince, elements }, problems: [] };
}

/** An export generated before yesterday (UTC) is stale: use since then is unknown. */
export const USAGE_EXPORT_MAX_AGE_DAYS = 1;

function daysBefore(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);
}

export interface GateInput {
  changes: ContractChange[];
  deprecations: Deprecation[];
  approvals: Approval[];
  usage?: UsageExport;
  /** What contracts/CHANGELOG.md added since the baseline was released (check.ts changelogSinceRelease). */
  changelog: string;
  /** YYYY-MM-DD, UTC. */
  today: string;
  /** Days of zero recorded use a removal needs (14 in production). */
  zeroUseDays: number;
  /** Tests only (CONTRACT_ZERO_USE_SECONDS): the window starts at this ISO time instead, and use is compared to the second. */
  zeroUseSince?: string;
  /**
   * Whether contracts/deprecations.yaml may name the element (check.ts: an operation, parameter,
   * body field, GraphQL or proto member, in the contract now or as released); unset: any. A status,
   * an error code, a header or an access rule cannot be deprecated by itself.
   */
  registrable?: (element: string) => boolean;
  /** Other recorded elements whose use counts as use of `element` (proto: the RPCs whose replies hold it). */
  impliedBy?: (element: string) => string[];
}

/**
 * Which breaking change may pass and why; meaning changes and new response values need a changelog entry. A change that
 * would pass but leaves something undone (`unmet`: a removed proto field's number and name not
 * reserved) is refused until it is done.
 */
export function judge(input: GateInput): Verdict[] {
  return judgeEach(input).map((verdict) =>
    verdict.allowed && verdict.change.class === 'breaking' && verdict.change.unmet
      ? { ...verdict, allowed: false, reason: `${verdict.reason}, but ${verdict.change.unmet}` }
      : verdict,
  );
}

/**
 * Whether a breaking rule is a removal (ours: `field-removed`, `operation-removed`, `rpc-removed`...;
 * graphql-inspector's `FIELD_REMOVED`...; buf's `FIELD_NO_DELETE_UNLESS_NUMBER_RESERVED`...).
 * `field-presence-removed` keeps the field: it is not one.
 */
export function isRemoval(rule: string): boolean {
  return rule !== 'field-presence-removed' && (/(^|-)removed$/.test(rule) || /_REMOVED$/.test(rule) || /_NO_DELETE/.test(rule));
}

/**
 * Whether `text` names `element` whole: `Order.status` is not named by `Order.statusReason`, nor
 * `response.200.body.status` by `...body.status.code` or `...body.status<kind=card>` (inside one of its
 * alternatives), so an entry about another element cannot pass this one.
 */
export function namedIn(text: string, element: string): boolean {
  for (let at = text.indexOf(element); at >= 0; at = text.indexOf(element, at + 1)) {
    const before = text[at - 1] ?? ' ';
    // A full stop ends a sentence, not the name, when no name character follows it.
    const after = text.slice(at + element.length, at + element.length + 2).replace(/^\.(?![\w[{<])/, ' ')[0] ?? ' ';
    if (!/[\w.:/{}[\]-]/.test(before) && !/[\w.[{<-]/.test(after)) return true;
  }
  return false;
}

function judgeEach(input: GateInput): Verdict[] {
  const windowStart = input.zeroUseSince ?? daysBefore(input.today, input.zeroUseDays);
  const windowDay = windowStart.slice(0, 10);
  const window = input.zeroUseSince ? `since ${input.zeroUseSince}` : `within ${input.zeroUseDays} days`;
  /** A time (ISO) inside the window: by day, or by the second with zeroUseSince. */
  const inWindow = (time: string) => (input.zeroUseSince ? time >= input.zeroUseSince : time.slice(0, 10) >= windowStart);
  return input.changes.map((item): Verdict => {
    // What old clients cannot tell from the schema alone: they hear of it in the changelog.
    if (item.spec === specRule.meaning || item.spec === specRule.newResponseValue) {
      const names = [item.element, item.alias].filter((name): name is string => Boolean(name));
      const logged = names.some((name) => namedIn(input.changelog, name) || namedIn(input.changelog, name.replace(/^[a-z]+:/, '')));
      const what = item.spec === specRule.meaning ? { done: 'meaning change', todo: 'a changed description may change the meaning' } : { done: 'new response value', todo: 'clients will read a value they have not seen: say what it means' };
      return { change: item, allowed: logged, reason: logged ? `${what.done} recorded in contracts/CHANGELOG.md` : `${what.todo}: name it in contracts/CHANGELOG.md as printed above, in an entry added since the baseline was released (an older entry does not count)` };
    }
    if (item.class !== 'breaking') return { change: item, allowed: true, reason: '' };

    const approvalOf = (place: { element: string; alias?: string; rule: string }): Approval | undefined =>
      input.approvals.find((entry) => (covers(entry.element, place.element) || (place.alias !== undefined && covers(entry.element, place.alias))) && (!entry.rule || entry.rule === place.rule));
    // An alternative no new one takes may be approved by what keeps the nearest from taking it,
    // each named inside that alternative: all of them, until the first approval expires.
    const partApprovals = item.within?.length ? item.within.map(approvalOf) : [];
    const approval =
      approvalOf(item) ??
      (partApprovals.length > 0 && partApprovals.every((found): found is Approval => found !== undefined)
        ? partApprovals.reduce((first, found) => (found.expires < first.expires ? found : first))
        : undefined);
    if (approval && approval.expires >= input.today) return { change: item, allowed: true, reason: `approved until ${approval.expires}: ${approval.reason}` };

    const deprecation = input.deprecations.find((entry) => covers(entry.element, item.element));
    // A replacement ends with the element's removal: zero recorded use says nobody uses it, which
    // makes removing it safe, not changing it. A request field nobody sends made required, a
    // parameter nobody sends made required, a type or a default changed: every caller of the
    // operation, none of which used the element, may be refused. Only removals pass this way.
    if (deprecation && !isRemoval(item.rule)) {
      return { change: item, allowed: false, reason: `deprecated (${deprecation.element}), but a completed replacement lets it be removed, not changed (${item.rule}): remove it, ship the change as a new major version, or approve it (contracts/approvals.yaml)` };
    }
    if (deprecation) {
      if (deprecation.sunset >= input.today) return { change: item, allowed: false, reason: `deprecated (${deprecation.element}), but its sunset ${deprecation.sunset} has not passed` };
      // A receiver's reading of a payload cannot be recorded: it was told in every delivery instead.
      if (deprecation.element.startsWith('webhook:')) {
        return { change: item, allowed: true, reason: `replacement complete: sunset ${deprecation.sunset} passed; receivers were told in every delivery carrying it since ${deprecation.announced} (Deprecation, Sunset, Link), and a field is no longer sent from its sunset on` };
      }
      if (!input.usage) return { change: item, allowed: false, reason: `deprecated (${deprecation.element}), sunset passed, but use is unknown: give the usage export with --usage <file>, or commit it as contracts/usage-export.json` };
      if (input.usage.generatedAt.slice(0, 10) < daysBefore(input.today, USAGE_EXPORT_MAX_AGE_DAYS)) {
        return { change: item, allowed: false, reason: `use is unknown since ${input.usage.generatedAt}: the usage export is stale (older than ${USAGE_EXPORT_MAX_AGE_DAYS} day), export it again` };
      }
      if (input.usage.generatedAt.slice(0, 10) > input.today) {
        return { change: item, allowed: false, reason: `the usage export says it was generated ${input.usage.generatedAt}, after today (${input.today}): export it again` };
      }
      if (input.usage.recordedSince > windowDay) {
        return { change: item, allowed: false, reason: `use is unknown before ${input.usage.recordedSince}: the usage export must cover ${input.zeroUseDays} days (since ${windowStart})` };
      }
      // Use of a part, of what holds it in an answer, or of an RPC whose reply holds it (never a guess of zero).
      const implied = new Set(input.impliedBy?.(deprecation.element) ?? []);
      const used = Object.entries(input.usage.elements).filter(([name, record]) => (mayHaveUsed(deprecation.element, name) || implied.has(name)) && record.lastUsed && inWindow(record.lastUsed));
      if (used.length > 0) {
        const callers = used.flatMap(([, record]) => (record.callers ?? []).filter((caller) => !caller.lastUsed || inWindow(caller.lastUsed)).map((caller) => caller.caller));
        const last = used.map(([, record]) => record.lastUsed ?? '').sort().pop();
        return { change: item, allowed: false, reason: `still used ${window} (last ${last}) by ${callers.length ? [...new Set(callers)].join(', ') : 'unidentified callers'}` };
      }
      return { change: item, allowed: true, reason: `replacement complete: sunset ${deprecation.sunset} passed and no recorded use ${input.zeroUseSince ? window : `for ${input.zeroUseDays} days`}` };
    }
    const expired = approval ? ` (the approval expired ${approval.expires})` : '';
    // The dated path differs: a removal is the last step of a replacement, while a change in place
    // never passes that way (a deprecated element may be removed, not changed), so the changed
    // element is added beside the old one and the old one replaced.
    const operation = /^rest:[A-Z]+ \S+/.exec(item.element)?.[0];
    const dated = input.registrable && !input.registrable(item.element)
      ? `the deprecation registry cannot name ${item.element}: ship the change in a new operation beside ${operation ?? 'it'}, deprecate the old one (contracts/deprecations.yaml: the new one as replacement, a sunset at least 30 days on) and remove it after the sunset`
      : isRemoval(item.rule)
      ? `deprecate it first (contracts/deprecations.yaml: a replacement, a sunset at least 30 days on) and remove it after the sunset once no use is recorded for ${input.zeroUseDays} days`
      : `it cannot change in place: add the changed one beside it (a new field, parameter or operation), deprecate this one (contracts/deprecations.yaml: the new one as replacement, a sunset at least 30 days on) and remove it after the sunset`;
    return { change: item, allowed: false, reason: `not allowed${expired}: ${dated} (docs/evolving-the-api.md, "Replacing a field: the four steps today"); or ship it as a new major version, or approve it (contracts/approvals.yaml)` };
  });
}

/**
 * The report, a block per change, and whether the gate passes. One change to a shared schema
 * (the error body every operation answers) is one block naming the schema and its places.
 */
export function render(verdicts: Verdict[], problems: string[]): { text: string; passed: boolean } {
  const lines: string[] = [];
  const counts = { breaking: 0, dangerous: 0, safe: 0, refused: 0 };
  const groups = new Map<string, Verdict[]>();
  for (const verdict of verdicts) {
    const { change: item } = verdict;
    counts[item.class]++;
    if (!verdict.allowed) counts.refused++;
    const key = [item.class, item.rule, item.alias ?? item.element, item.message, verdict.allowed, verdict.reason, item.source].join('|');
    groups.set(key, [...(groups.get(key) ?? []), verdict]);
  }
  for (const group of groups.values()) {
    const [{ change: item, allowed, reason }] = group;
    const source = item.source ? ` (${item.source})` : '';
    const heading = group.length > 1 && item.alias ? `${item.alias} (${group.length} places)` : item.element;
    lines.push(`${item.class.toUpperCase().padEnd(9)} ${heading}${source}`);
    lines.push(`          ${item.rule}: ${item.message} | ${item.spec}`);
    if (item.within?.length) lines.push(`          inside: ${item.within.map((place) => `${place.alias ?? place.element} (${place.rule})`).join('; ')}`);
    if (reason) lines.push(`          ${allowed ? 'allowed' : 'REFUSED'}: ${reason}`);
    if (group.length > 1) {
      for (const { change: place } of group.slice(0, 3)) lines.push(`          at ${place.element}`);
      if (group.length > 3) lines.push(`          and ${group.length - 3} more`);
    }
  }
  for (const problem of problems) lines.push(`REGISTRY  ${problem}`);
  const passed = counts.refused === 0 && problems.length === 0;
  lines.push(
    `contract:check: ${counts.breaking} breaking, ${counts.dangerous} dangerous, ${counts.safe} safe; ${counts.refused} refused, ${problems.length} registry problems: ${passed ? 'passed' : 'FAILED'}`,
  );
  return { text: lines.join('\n'), passed };
}
