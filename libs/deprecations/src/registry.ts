// The deprecation registry (contracts/deprecations.yaml): every element of the released contracts
// that is being replaced, with its replacement, dates, notice and brownout windows. One reader for
// everything that acts on it: the contract gate (tools/contracts), the gateway's headers,
// brownouts and usage reports, and the generators that mark the contracts.
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { z } from '@platform/validation';

/** A window in which calls that use the element fail with 410 GONE (or are only recorded, in dry run). */
export interface Brownout {
  /** ISO date-times, UTC. */
  start: string;
  end: string;
  /** Record who would have been hit, fail nobody. */
  dryRun: boolean;
}

export interface Deprecation {
  /** `rest:GET /v1/orders query.offset`, `graphql:Shipment.trackingNumber`, `proto:inventory.v1.ReserveRequest.sku`. */
  element: string;
  replacement: string;
  /** YYYY-MM-DD. */
  announced: string;
  /** YYYY-MM-DD: from this day on, calls that use the element answer 410 GONE until it is removed. */
  sunset: string;
  notice: string;
  brownouts: Brownout[];
}

const datePattern = /^\d{4}-\d{2}-\d{2}$/;

/** A YAML date (parsed or quoted) as YYYY-MM-DD, or undefined. */
export function asDate(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return typeof value === 'string' && datePattern.test(value) && !Number.isNaN(Date.parse(value)) ? value : undefined;
}

function asDateTime(value: unknown): string | undefined {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) && !Number.isNaN(Date.parse(value)) ? new Date(value).toISOString() : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function readBrownouts(raw: unknown, label: string, problems: string[]): Brownout[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.push(`${label}: brownouts must be a list`);
    return [];
  }
  const windows: Brownout[] = [];
  raw.forEach((item: Record<string, unknown>, index) => {
    const start = asDateTime(item?.start);
    const end = asDateTime(item?.end);
    if (!start || !end || end <= start) {
      problems.push(`${label}: brownout ${index + 1} needs start and end (ISO date-times, end after start)`);
      return;
    }
    windows.push({ start, end, dryRun: item.dryRun === true });
  });
  return windows;
}

/**
 * Reads the registry's parsed YAML; each problem is one line the gate prints and fails on. With
 * `exists`, an entry naming an element the contracts do not have is a problem too.
 */
export function readDeprecations(raw: unknown, exists?: (element: string) => boolean): { entries: Deprecation[]; problems: string[] } {
  const entries: Deprecation[] = [];
  const problems: string[] = [];
  const list = (raw as { deprecations?: unknown } | null)?.deprecations ?? [];
  if (!Array.isArray(list)) return { entries, problems: ['deprecations.yaml: `deprecations` must be a list'] };
  list.forEach((item: Record<string, unknown>, index) => {
    const label = `deprecations.yaml entry ${index + 1}${text(item?.element) ? ` (${item.element})` : ''}`;
    const element = text(item?.element);
    const replacement = text(item?.replacement);
    const notice = text(item?.notice);
    const announced = asDate(item?.announced);
    const sunset = asDate(item?.sunset);
    const before = problems.length;
    if (!element) problems.push(`${label}: no element`);
    else if (exists && !exists(element)) problems.push(`${label}: names an element that is not in the contract`);
    if (!replacement) problems.push(`${label}: no replacement (write "none" and why, if there is none)`);
    if (!notice) problems.push(`${label}: no notice link`);
    if (!announced) problems.push(`${label}: no announced date (YYYY-MM-DD)`);
    if (!sunset) problems.push(`${label}: no sunset date (YYYY-MM-DD)`);
    if (announced && sunset && sunset < announced) problems.push(`${label}: sunset ${sunset} is before the announcement ${announced}`);
    const brownouts = readBrownouts(item?.brownouts, label, problems);
    if (problems.length === before && element && replacement && notice && announced && sunset) entries.push({ element, replacement, notice, announced, sunset, brownouts });
  });
  return { entries, problems };
}

/** The registry file's entries; a missing file is an empty registry, a malformed one throws (a service must not start on it). */
export function loadDeprecations(file: string): Deprecation[] {
  if (!existsSync(file)) return [];
  const { entries, problems } = readDeprecations(parse(readFileSync(file, 'utf8')));
  if (problems.length > 0) throw new Error(`${file}: ${problems.join('; ')}`);
  return entries;
}

/**
 * Whether `entry` names `element` itself or one of its parents (an operation covers its
 * parameters, a field what is inside it, `payment` its alternative `payment<kind=card>`).
 */
export function covers(entry: string, element: string): boolean {
  return element === entry || (element.startsWith(entry) && /^[ .[{<]/.test(element.slice(entry.length)));
}

/**
 * `element` without the names of alternatives in it (`payment<kind=card>.brand` is
 * `payment.brand`): the gateway records and marks a body's fields by their path, whichever
 * alternative a value is, so that path is what use of a place inside an alternative is recorded as.
 */
export function withoutAlternatives(element: string): string {
  return element.replace(/<[^<>]+>/g, '');
}

/**
 * Whether recorded use of `recorded` may be use of `element`: its own use or a part of it (an
 * operation's parameter), or, for a part of an answer, use of the answer or a field holding it.
 * The gateway records the top-level fields a caller reads (or, without `fields=`, the whole
 * answer `response.<status>`), never a nested one: a caller that read `body.items` may read
 * `body.items[].sku`. A request part is recorded as sent, so an operation's use is not use of
 * its parameters. Header names compare without case, as HTTP does.
 */
export function mayHaveUsed(element: string, recorded: string): boolean {
  const path = withoutAlternatives(element);
  const [wanted, seen] = path.includes(' header.') || recorded.includes(' header.') ? [path.toLowerCase(), recorded.toLowerCase()] : [path, recorded];
  if (covers(wanted, seen)) return true;
  return covers(seen, wanted) && / response\./.test(seen);
}

/**
 * What a call that uses an entry's element meets at one moment: `deprecated` (answered, with the
 * deprecation headers), `dry-run` (answered, but recorded as one a brownout would have failed),
 * `brownout` (410 GONE, or a response field left out) and `sunset` (the same, for good, from the
 * sunset day on until the element is removed).
 */
export type Phase = 'deprecated' | 'dry-run' | 'brownout' | 'sunset';

export function phaseAt(entry: Deprecation, at: Date = new Date()): Phase {
  const now = at.toISOString();
  if (now >= `${entry.sunset}T00:00:00.000Z`) return 'sunset';
  const window = entry.brownouts.find((brownout) => brownout.start <= now && now < brownout.end && !brownout.dryRun) ?? entry.brownouts.find((brownout) => brownout.start <= now && now < brownout.end);
  if (!window) return 'deprecated';
  return window.dryRun ? 'dry-run' : 'brownout';
}

/** The end of the brownout window `at` falls in, if any (ISO date-time). */
export function brownoutEnd(entry: Deprecation, at: Date = new Date()): string | undefined {
  const now = at.toISOString();
  return entry.brownouts.find((brownout) => brownout.start <= now && now < brownout.end && !brownout.dryRun)?.end;
}

/**
 * The response headers for answers that used `entries` (at least one): `Deprecation` (RFC 9745,
 * `@` + the Unix time of the earliest announcement), `Sunset` (RFC 8594, the earliest sunset as an
 * HTTP date; never before the Deprecation, as each entry's sunset is on or after its announcement)
 * and one `Link` per notice with `rel="deprecation"`.
 */
export function deprecationHeaders(entries: readonly Deprecation[]): { Deprecation: string; Sunset: string; Link: string } {
  const announced = entries.map((entry) => entry.announced).sort()[0];
  const sunset = entries.map((entry) => entry.sunset).sort()[0];
  const notices = [...new Set(entries.map((entry) => entry.notice))];
  return {
    Deprecation: `@${Date.parse(`${announced}T00:00:00Z`) / 1000}`,
    Sunset: new Date(`${sunset}T00:00:00Z`).toUTCString(),
    Link: notices.map((notice) => `<${notice}>; rel="deprecation"; type="text/html"`).join(', '),
  };
}

/** The sentence a refused caller reads: what is gone, until when, and what to use instead. */
export function goneMessage(entry: Deprecation, phase: 'brownout' | 'sunset', at: Date = new Date()): string {
  const what = entry.element.replace(/^(rest|graphql|proto):/, '');
  const instead = entry.replacement === 'none' || entry.replacement.startsWith('none') ? entry.replacement : `use ${entry.replacement.replace(/^(rest|graphql|proto):/, '')} instead`;
  if (phase === 'sunset') return `${what} was retired on ${entry.sunset}: ${instead}. See ${entry.notice}.`;
  return `${what} is deprecated and unavailable during a brownout until ${brownoutEnd(entry, at) ?? 'the window ends'}: ${instead}. It stops working on ${entry.sunset}; see ${entry.notice}.`;
}

/**
 * The `DEPRECATIONS_FILE` setting of a service that acts on the registry (the gateway,
 * inventory-service): the file named, or `defaultFile` (beside main.js, where the build copies
 * contracts/deprecations.yaml), read and checked at start. A malformed registry, or a named file
 * that does not exist, is a configuration problem: the service does not start, and says why.
 */
export function registrySetting(defaultFile: string) {
  return z
    .string()
    .optional()
    .transform((named, context) => {
      // The default missing (a test run from source) is an empty registry.
      const file = named ?? defaultFile;
      try {
        if (named && !existsSync(named)) throw new Error(`${named} does not exist`);
        return { file, entries: loadDeprecations(file) };
      } catch (error) {
        context.addIssue({ code: 'custom', message: `the deprecation registry cannot be read: ${error instanceof Error ? error.message : String(error)}` });
        return z.NEVER;
      }
    });
}
