#!/usr/bin/env node
// Checks the alert rules as Prometheus would load them: extracts the PrometheusRule's `spec`
// into a plain rule file, then `promtool check rules` and `promtool test rules` (the unit tests
// in deploy/monitoring/rules/*.test.yaml). promtool comes with Debian's `prometheus` package.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const rulesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../deploy/monitoring/rules');
const work = mkdtempSync(path.join(tmpdir(), 'rules-'));
try {
  const resource = parse(readFileSync(path.join(rulesDir, 'platform-alerts.yaml'), 'utf8'));
  if (resource.kind !== 'PrometheusRule') throw new Error('platform-alerts.yaml must be a PrometheusRule');
  writeFileSync(path.join(work, 'platform-alerts.rules.yaml'), stringify(resource.spec));
  const tests = readdirSync(rulesDir).filter((name) => name.endsWith('.test.yaml'));
  for (const name of tests) copyFileSync(path.join(rulesDir, name), path.join(work, name));
  const promtool = (...args) => execFileSync('promtool', args, { cwd: work, stdio: 'inherit' });
  promtool('check', 'rules', 'platform-alerts.rules.yaml');
  promtool('test', 'rules', ...tests);
} finally {
  rmSync(work, { recursive: true, force: true });
}
