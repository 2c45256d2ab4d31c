// The dashboards and alert rules of deploy/monitoring query metrics by name; a renamed metric
// would leave a panel empty or an alert silent, unnoticed. Every name they use must be one the
// running apps expose (kube_* come from kube-state-metrics; platform:* are recording rules).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { stackPorts } from '@platform/test-kit';
import { PORT_OFFSET } from './stack';

const monitoring = path.resolve(__dirname, '../../../deploy/monitoring');
const ports = stackPorts(PORT_OFFSET);
/** Metrics of the PostgreSQL pool: the embedded database (PGlite, when TEST_DATABASE_URL is unset) has none. */
const POSTGRES_ONLY = ['db_query_duration_seconds', 'db_pool_connections'];
const PROMQL_WORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'inf', 'nan']);

/** Metric names a PromQL expression reads: identifiers outside label matchers, ranges, strings and grouping clauses, that are not functions. */
function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"[^"]*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()/g)].map((match) => match[1]).filter((name) => !PROMQL_WORDS.has(name.toLowerCase()));
}

/** Every sample name an app's /metrics can carry (a histogram's _bucket, _sum and _count too). */
async function exposedNames(url: string): Promise<string[]> {
  const text = await (await fetch(url)).text();
  return [...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) => (type === 'histogram' ? [name, `${name}_bucket`, `${name}_sum`, `${name}_count`] : type === 'summary' ? [name, `${name}_sum`, `${name}_count`] : [name]));
}

it('uses in its dashboards and alert rules only metric names the running apps expose', async () => {
  const endpoints = [`http://127.0.0.1:${ports.metrics}/metrics`, ...(['users', 'orders', 'catalog', 'inventory'] as const).map((app) => `http://127.0.0.1:${ports[app]}/metrics`)];
  const exposed = new Set((await Promise.all(endpoints.map(exposedNames))).flat());
  expect(exposed.has('http_requests_total')).toBe(true);

  const rules = (parse(readFileSync(path.join(monitoring, 'rules/platform-alerts.yaml'), 'utf8')) as { spec: { groups: { rules: { record?: string; expr: string }[] }[] } }).spec.groups.flatMap((group) => group.rules);
  const recorded = new Set(rules.flatMap((rule) => (rule.record ? [rule.record] : [])));
  const dashboards = readdirSync(path.join(monitoring, 'dashboards')).map((file) => JSON.parse(readFileSync(path.join(monitoring, 'dashboards', file), 'utf8')) as { panels: { targets: { expr: string }[] }[] });
  const queries = [...rules.map((rule) => rule.expr), ...dashboards.flatMap((dashboard) => dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr)))];
  const embedded = !process.env.TEST_DATABASE_URL;
  const used = new Set(
    queries.flatMap(metricNamesIn).filter((name) => !recorded.has(name) && !name.startsWith('kube_') && !(embedded && POSTGRES_ONLY.some((metric) => name.startsWith(metric)))),
  );
  expect(used.size).toBeGreaterThan(8);
  expect([...used].filter((name) => !exposed.has(name))).toEqual([]);
});
