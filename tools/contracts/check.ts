// npm run contract:check [-- --usage <export.json>, else contracts/usage-export.json if committed] [--today YYYY-MM-DD] [--root <checkout>]: compares the committed
// contracts (OpenAPI document, supergraph and subgraph SDLs, proto) with the released baselines,
// prints every change with its class, element and rule, and fails on a breaking change that is
// not allowed, on a registry or approval problem, and on a meaning change without a changelog entry.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { sortChanges, specRule, type ContractChange } from './changes';
import { covers, type Deprecation, readDeprecations } from '@platform/deprecations';
import { isRemoval, judge, readApprovals, readUsage, render } from './gate';
import type { GraphQLSchema } from 'graphql';
import { clientSchemaOf, diffGraphQL, graphqlDeprecatedElements, graphqlDeprecationReason, graphqlElementExists, schemaOf } from './graphql-diff';
import { diffOpenApi, restElementExists, webhookElementExists } from './openapi-diff';
import { compareProto, protoDeprecatedElements, protoElementDeprecated, protoElementExists, rpcsReading } from './proto-diff';
import { unregisteredMarksOf } from '../openapi/deprecation-marks';
import { layoutOf, repositoryRoot } from './layout';

/** The usage export a removal commits under contracts/ for the gate in CI (`npm run contract:usage -- --export contracts/usage-export.json`). */
export const USAGE_EXPORT_FILE = 'usage-export.json';

/** The zero-use window a removal needs (criterion 3(b)). */
export const ZERO_USE_DAYS = 14;

/**
 * The zero-use window, from the environment. CONTRACT_ZERO_USE_DAYS may lengthen it anywhere.
 * A shorter one (fewer days, or CONTRACT_ZERO_USE_SECONDS=<n>: the last n seconds, compared to
 * the second, so an end-to-end test can run a whole replacement in a minute) is for tests only:
 * it is taken only with --root naming a copy of the contracts, never on this checkout itself.
 * So `npm run contract:check` in CI, which runs on the checkout, cannot be passed with a shorter
 * window by an environment variable; it refuses to run instead.
 */
export function zeroUseWindow(env: NodeJS.ProcessEnv, root: string | undefined): { days: number; since?: string; shortened: boolean } | { error: string } {
  const configuredDays = env.CONTRACT_ZERO_USE_DAYS;
  const configuredSeconds = env.CONTRACT_ZERO_USE_SECONDS;
  const days = configuredDays === undefined ? ZERO_USE_DAYS : Number(configuredDays);
  if (!Number.isInteger(days) || days < 0) return { error: `CONTRACT_ZERO_USE_DAYS must be a whole number of days, not ${configuredDays}` };
  const seconds = configuredSeconds === undefined ? undefined : Number(configuredSeconds);
  if (seconds !== undefined && (!Number.isInteger(seconds) || seconds < 0)) return { error: `CONTRACT_ZERO_USE_SECONDS must be a whole number of seconds, not ${configuredSeconds}` };
  const shortened = days < ZERO_USE_DAYS || seconds !== undefined;
  const onCopy = root !== undefined && realpathSync(root) !== realpathSync(repositoryRoot);
  if (shortened && !onCopy) {
    return { error: `a zero-use window under ${ZERO_USE_DAYS} days (CONTRACT_ZERO_USE_DAYS/CONTRACT_ZERO_USE_SECONDS) is for tests on a copy of the contracts (--root <copy>), not for this checkout${env.CI === 'true' ? ' in CI' : ''}` };
  }
  return { days, shortened, ...(seconds !== undefined ? { since: new Date(Date.now() - seconds * 1000).toISOString() } : {}) };
}

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

function readYaml(file: string): unknown {
  return existsSync(file) ? parse(readFileSync(file, 'utf8')) : {};
}

/**
 * What contracts/CHANGELOG.md says that it did not say at the release: its lines not in the copy
 * contract:release keeps (contracts/v1/CHANGELOG.md), or, for a baseline released without that
 * copy, the lines under a `## YYYY-MM-DD` heading dated on or after the release day. An entry
 * written for an earlier change never counts for a new one.
 */
export function changelogSinceRelease(current: string, released: string | undefined, releasedDay: string): string {
  const lines = current.split('\n');
  if (released !== undefined) {
    const old = new Map<string, number>();
    for (const line of released.split('\n')) old.set(line, (old.get(line) ?? 0) + 1);
    return lines
      .filter((line) => {
        const seen = old.get(line) ?? 0;
        if (seen > 0) old.set(line, seen - 1);
        return seen === 0;
      })
      .join('\n');
  }
  let day: string | undefined;
  return lines
    .filter((line) => {
      const heading = /^##\s+(\d{4}-\d{2}-\d{2})\b/.exec(line);
      if (heading || /^#{1,2}\s/.test(line)) day = heading?.[1];
      return day !== undefined && day >= releasedDay;
    })
    .join('\n');
}

/** The elements the registry file names, whatever else its entries lack. */
function registeredElementsOf(raw: unknown): string[] {
  const list = (raw as { deprecations?: unknown } | null)?.deprecations;
  return Array.isArray(list) ? list.flatMap((item: { element?: unknown } | null) => (typeof item?.element === 'string' ? [item.element.trim()] : [])) : [];
}

/** The least time between the change that sets a sunset and the sunset: clients are told before an element stops answering. */
export const MIN_NOTICE_DAYS = 30;
/** The least time between the change that schedules a brownout and its start. */
export const MIN_BROWNOUT_NOTICE_DAYS = 7;

const addDays = (day: string, days: number): string => new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/**
 * Entries that would take an element away sooner than clients can be told: a sunset set in this
 * change (a new entry, or one moved earlier than released) less than MIN_NOTICE_DAYS after
 * `today`, or a brownout added in this change starting less than MIN_BROWNOUT_NOTICE_DAYS after
 * it. From its sunset (or in a brownout) the gateway answers 410 and leaves response fields out,
 * so a sunset dated today would retire an element the moment the registry is deployed. Checked
 * while the element is still in the contract: the change that removes it (the last step of a
 * replacement) is judged by the removal rules, on the released dates.
 */
export function noticeProblemsOf(current: readonly Deprecation[], released: readonly Deprecation[], existsNow: (element: string) => boolean, today: string): string[] {
  const sunsetFrom = addDays(today, MIN_NOTICE_DAYS);
  const brownoutFrom = `${addDays(today, MIN_BROWNOUT_NOTICE_DAYS)}T00:00:00.000Z`;
  return current.flatMap((entry, index): string[] => {
    if (!existsNow(entry.element)) return [];
    const label = `deprecations.yaml entry ${index + 1} (${entry.element})`;
    const before = released.find((old) => old.element === entry.element);
    const problems: string[] = [];
    const sunsetSetNow = !before || entry.sunset < before.sunset;
    if (sunsetSetNow && entry.sunset < sunsetFrom) problems.push(`${label}: sunset ${entry.sunset} gives clients less than ${MIN_NOTICE_DAYS} days' notice from ${today}; set it on ${sunsetFrom} or later`);
    for (const brownout of entry.brownouts) {
      const scheduledNow = !before?.brownouts.some((old) => old.start === brownout.start && old.end === brownout.end);
      if (scheduledNow && !brownout.dryRun && brownout.start < brownoutFrom) problems.push(`${label}: the brownout from ${brownout.start} gives clients less than ${MIN_BROWNOUT_NOTICE_DAYS} days' notice from ${today}`);
    }
    return problems;
  });
}

/** A subgraph's removal of an element (not a type's) the supergraph still serves: it moved to another subgraph. */
function movedAway(item: ContractChange, servedNow: GraphQLSchema): boolean {
  return item.class === 'breaking' && isRemoval(item.rule) && item.rule !== 'TYPE_REMOVED' && graphqlElementExists(servedNow, item.element);
}

export interface CheckResult {
  text: string;
  passed: boolean;
}

/**
 * The OpenAPI diffs made so far in this process, by the two documents' text: the diff is most of
 * a gate run's own work (0.5 to 1 s for this API's document), and a process that runs the gate
 * again (its tests, sixty times) mostly diffs the same two documents.
 */
const openApiDiffs = new Map<string, ContractChange[]>();

function openApiChanges(beforeText: string, afterText: string, before: Record<string, unknown>, after: Record<string, unknown>): ContractChange[] {
  const key = createHash('sha256').update(beforeText).update('\0').update(afterText).digest('hex');
  let found = openApiDiffs.get(key);
  if (!found) openApiDiffs.set(key, (found = diffOpenApi(before, after)));
  return structuredClone(found);
}

/** Runs the whole gate; `today` and the usage export come from the caller. */
export async function runCheck(options: { today: string; usage?: unknown; zeroUseDays: number; zeroUseSince?: string; root?: string }): Promise<CheckResult> {
  const { root, contractsDir, baselineDir, releaseFile, protoDir, protoBaselineDir, files } = layoutOf(options.root);
  if (!existsSync(releaseFile)) return { text: 'contract:check: no released baseline (contracts/v1/release.json); run npm run contract:release', passed: false };
  const release = JSON.parse(readFileSync(releaseFile, 'utf8')) as { releasedAt: string; commit: string };
  const changes: ContractChange[] = [];
  const [openapi, supergraph, ...subgraphFiles] = files;
  const [openapiBeforeText, openapiAfterText] = [readFileSync(openapi.baseline, 'utf8'), readFileSync(openapi.current, 'utf8')];
  const openapiBefore = JSON.parse(openapiBeforeText);
  const openapiAfter = JSON.parse(openapiAfterText);
  changes.push(...openApiChanges(openapiBeforeText, openapiAfterText, openapiBefore, openapiAfter));
  // What clients can query now: the current supergraph's API schema (check-generated keeps the
  // supergraph composed from today's subgraphs).
  const servedNow = clientSchemaOf(readFileSync(supergraph.current, 'utf8'));
  for (const { current, baseline } of [supergraph, ...subgraphFiles]) {
    const source = path.relative(root, current);
    if (!existsSync(baseline)) {
      changes.push({ kind: 'graphql', class: 'safe', element: `graphql:${source}`, rule: 'subgraph-added', spec: 'A new subgraph; its types reach clients through the supergraph', message: 'new subgraph', source });
      continue;
    }
    const found = await diffGraphQL(readFileSync(baseline, 'utf8'), readFileSync(current, 'utf8'), source);
    // A subgraph that stops serving what the supergraph still serves (another subgraph resolves it
    // now): a move between services, which clients do not see. Judged as a removal, it would be
    // refused with advice meant for clients (deprecate it, a new major version).
    changes.push(...(current === supergraph.current ? found : found.map((item) => (movedAway(item, servedNow) ? { ...item, class: 'safe' as const, rule: 'served-by-another-subgraph', spec: specRule.compatible, message: `${item.message}; the supergraph still serves it, from another subgraph: clients see no change` } : item))));
  }
  const proto = compareProto(protoBaselineDir, protoDir);
  changes.push(...proto.changes);

  // The registry may name what exists now, or what this change removes (the last step of a replacement).
  const schemas = [readFileSync(supergraph.current, 'utf8'), readFileSync(supergraph.baseline, 'utf8')].map(schemaOf);
  const protos = [proto.after, proto.before];
  const exists = (element: string): boolean =>
    element.startsWith('rest:') ? [openapiAfter, openapiBefore].some((doc) => restElementExists(doc, element))
    : element.startsWith('webhook:') ? [openapiAfter, openapiBefore].some((doc) => webhookElementExists(doc, element))
    : element.startsWith('graphql:') ? schemas.some((schema) => graphqlElementExists(schema, element))
    : element.startsWith('proto:') ? protos.some((model) => protoElementExists(model, element))
    : false;
  const registry = readYaml(path.join(contractsDir, 'deprecations.yaml'));
  const deprecations = readDeprecations(registry, exists);
  // The registry as released (contract:release copies it): an entry dropped in the change that
  // removes its element, the last step of a replacement, still lets that removal pass on its terms.
  const releasedEntries = readDeprecations(readYaml(path.join(baselineDir, 'deprecations.yaml'))).entries;
  const released = releasedEntries.filter((entry) => !deprecations.entries.some((current) => current.element === entry.element));
  const existsNow = (element: string): boolean =>
    element.startsWith('rest:') ? restElementExists(openapiAfter, element)
    : element.startsWith('webhook:') ? webhookElementExists(openapiAfter, element)
    : element.startsWith('graphql:') ? graphqlElementExists(schemas[0], element)
    : element.startsWith('proto:') ? protoElementExists(proto.after, element)
    : false;
  const noticeProblems = noticeProblemsOf(deprecations.entries, releasedEntries, existsNow, options.today);
  // The contracts must say so themselves where their language can: GraphQL's @deprecated(reason:)
  // with the replacement and the sunset date, proto's deprecated = true (REST's marks are generated
  // into the OpenAPI document from the registry). Checked where the element still exists.
  const markProblems = deprecations.entries.flatMap((entry, index): string[] => {
    const label = `deprecations.yaml entry ${index + 1} (${entry.element})`;
    if (entry.element.startsWith('graphql:')) {
      const reason = graphqlDeprecationReason(schemas[0], entry.element);
      if (reason === undefined) return [];
      const replacement = entry.replacement.replace(/^graphql:/, '');
      const namesReplacement = entry.replacement.startsWith('none') || reason?.includes(replacement) || reason?.includes(replacement.split('.').pop() ?? replacement);
      if (reason && namesReplacement && reason.includes(entry.sunset)) return [];
      // With no replacement ("none" and why), the reason says why, as the gateway's 410 message does.
      const suggested = entry.replacement.startsWith('none') ? `No replacement${entry.replacement.slice('none'.length)}` : `Use ${replacement}`;
      return [`${label}: the subgraph SDL must mark it @deprecated(reason: "${suggested}; removed on ${entry.sunset}.")${reason ? `, not "${reason}"` : ''}`];
    }
    if (entry.element.startsWith('proto:') && protoElementDeprecated(proto.after, entry.element) === false) return [`${label}: the .proto must mark it deprecated ([deprecated = true] on a field or enum value, option deprecated = true; in an RPC, message or enum)`];
    return [];
  });
  // The other way round: a mark in a contract with no entry behind it. The registry is the one
  // place a deprecation is declared: without an entry no sunset is tracked, the gateway sends no
  // Deprecation header and the removal is not gated on use, while clients read "deprecated".
  // An entry the registry reports a problem with still counts here (it is reported once, there).
  const named = [...new Set([...deprecations.entries.map((entry) => entry.element), ...registeredElementsOf(registry)])];
  const unregistered = (element: string) => !named.some((entry) => covers(entry, element));
  const markedIn = new Map<string, string[]>();
  for (const { current } of [...subgraphFiles, supergraph]) {
    for (const element of graphqlDeprecatedElements(clientSchemaOf(readFileSync(current, 'utf8')))) markedIn.set(element, [...(markedIn.get(element) ?? []), path.relative(root, current)]);
  }
  for (const { element, file } of protoDeprecatedElements(proto.after)) markedIn.set(element, [path.relative(root, path.join(protoDir, file))]);
  const addEntry = 'add an entry to contracts/deprecations.yaml (element, replacement, announced, a sunset at least 30 days on, notice), or take the mark away: the registry is where a deprecation is declared, and without an entry no sunset is tracked, the gateway sends no Deprecation header and its removal is not gated on use (docs/evolving-the-api.md, "The deprecation registry")';
  const unregisteredProblems = [
    ...[...markedIn].filter(([element]) => unregistered(element)).map(([element, files]) => `${element} is marked deprecated in ${files.join(', ')} but has no registry entry: ${addEntry}`),
    ...unregisteredMarksOf(openapiAfter).filter(({ element }) => !element || unregistered(element)).map(({ pointer, element }) => `${element ?? pointer} is marked deprecated in ${path.relative(root, openapi.current)} (at ${pointer}) by its declaration, not by the registry: REST marks are generated from contracts/deprecations.yaml; drop the hand-made mark and ${addEntry.replace(', or take the mark away', '')}`),
  ];
  const approvals = readApprovals(readYaml(path.join(contractsDir, 'approvals.yaml')), options.today);
  // An approval allows what it names and everything under it, so it must name something of the
  // contracts (now or as released): "rest:GET" or "webhook:order" would allow every breaking change
  // in every GET operation, or in every order.* webhook. Named as the gate prints elements: the
  // element itself, or at least an existing operation, type, proto element or its parent, webhook
  // or named schema (the alias) at its head.
  const webhookNames = new Set([openapiAfter, openapiBefore].flatMap((doc) => Object.keys((doc as { webhooks?: object }).webhooks ?? {})));
  const schemaNames = new Set([openapiAfter, openapiBefore].flatMap((doc) => Object.keys((doc as { components?: { schemas?: object } }).components?.schemas ?? {})));
  const approvable = (element: string): boolean => {
    if (exists(element)) return true;
    const alias = /^rest:#\/components\/schemas\/([^./[{ ]+)/.exec(element);
    if (alias) return schemaNames.has(alias[1]);
    const operation = /^(rest:[A-Z]+ \/\S*)(?: |$)/.exec(element);
    if (operation) return exists(operation[1]);
    const webhook = /^webhook:(\S+?)(?: |$)/.exec(element);
    if (webhook) return webhookNames.has(webhook[1]);
    const type = /^(graphql:[_A-Za-z][_0-9A-Za-z]*)(?:\.|$)/.exec(element);
    if (type) return exists(type[1]);
    if (element.startsWith('proto:')) return exists(element.slice(0, element.lastIndexOf('.')));
    return false;
  };
  approvals.entries.forEach((entry) => {
    if (!approvable(entry.element)) approvals.problems.push(`approvals.yaml: ${JSON.stringify(entry.element)} names nothing in the contracts: name the element as contract:check prints it (rest:<METHOD> <path> ..., graphql:<Type>.<field>, proto:<package>.<Name>, webhook:<event type> ...)`);
  });
  approvals.entries = approvals.entries.filter((entry) => approvable(entry.element));
  // Without --usage, the export committed with the removal (CI runs the gate without --usage).
  const committedUsage = path.join(contractsDir, USAGE_EXPORT_FILE);
  let usageInput = options.usage;
  const usageProblems: string[] = [];
  if (usageInput === undefined && existsSync(committedUsage)) {
    try {
      usageInput = JSON.parse(readFileSync(committedUsage, 'utf8'));
    } catch (error) {
      usageProblems.push(`contracts/${USAGE_EXPORT_FILE}: not JSON (${(error as Error).message})`);
    }
  }
  const usage = usageInput === undefined ? { problems: usageProblems } : readUsage(usageInput);
  const changelogFile = path.join(contractsDir, 'CHANGELOG.md');
  const verdicts = judge({
    changes: sortChanges(changes),
    deprecations: [...deprecations.entries, ...released],
    approvals: approvals.entries,
    usage: usage.usage,
    changelog: changelogSinceRelease(existsSync(changelogFile) ? readFileSync(changelogFile, 'utf8') : '', existsSync(path.join(baselineDir, 'CHANGELOG.md')) ? readFileSync(path.join(baselineDir, 'CHANGELOG.md'), 'utf8') : undefined, release.releasedAt.slice(0, 10)),
    today: options.today,
    zeroUseDays: options.zeroUseDays,
    zeroUseSince: options.zeroUseSince,
    registrable: exists,
    impliedBy: (element) => (element.startsWith('proto:') ? [...new Set(protos.flatMap((model) => rpcsReading(model, element)))] : []),
  });
  const { text, passed } = render(verdicts, [...deprecations.problems, ...noticeProblems, ...markProblems, ...unregisteredProblems, ...approvals.problems, ...usage.problems]);
  return { text: `contract:check against the baseline released ${release.releasedAt} at ${release.commit.slice(0, 12)}\n${text}`, passed };
}

export async function main(): Promise<void> {
  const usageFile = option('--usage');
  const today = option('--today') ?? new Date().toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(today) || Number.isNaN(Date.parse(today))) {
    console.error(`contract:check: --today takes a date, YYYY-MM-DD, not ${today}`);
    process.exitCode = 2;
    return;
  }
  let usage: unknown;
  if (usageFile) {
    try {
      usage = JSON.parse(readFileSync(usageFile, 'utf8'));
    } catch (error) {
      console.error(`contract:check: cannot read the usage export ${usageFile}: ${(error as Error).message}`);
      process.exitCode = 2;
      return;
    }
  }
  const root = option('--root') && path.resolve(option('--root') as string);
  const window = zeroUseWindow(process.env, root || undefined);
  if ('error' in window) {
    console.error(`contract:check: ${window.error}`);
    process.exitCode = 2;
    return;
  }
  const result = await runCheck({ today, usage, zeroUseDays: window.days, zeroUseSince: window.since, root: root || undefined });
  if (window.shortened) console.log(`contract:check: zero-use window shortened for a test to ${window.since ? `since ${window.since}` : `${window.days} days`} (on ${root})`);
  console.log(result.text);
  process.exitCode = result.passed ? 0 : 1;
}
