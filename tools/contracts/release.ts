// npm run contract:release: the contracts as they are now become the released baseline that
// `contract:check` compares against, stamped with the day and the commit they came from.
// `-- --root <checkout>` releases another checkout's contracts (the replacement e2e's copy).
// A release names the commit it came from, so it is refused while the contracts or the files
// released beside them (the changelog, the deprecation registry) have changes not committed:
// such a baseline would be no commit's contracts. `-- --allow-dirty` releases them anyway.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { layoutOf } from './layout';

export async function main(): Promise<void> {
  const named = process.argv.indexOf('--root');
  const { root, baselineDir, files: contracts, protoDir, protoBaselineDir, releaseFile } = layoutOf(named > 0 && process.argv[named + 1] ? path.resolve(process.argv[named + 1]) : undefined);
  // Output as git wrote it: a porcelain status line starts with a space that trimming would take.
  const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8' });
  const commit = git('rev-parse', 'HEAD').trim();
  const sources = ['apps/gateway/src/openapi/openapi.json', 'apps/gateway/src/graphql/supergraph.graphql', 'apps/*/src/graphql/schema.graphql', 'proto', 'contracts/CHANGELOG.md', 'contracts/deprecations.yaml'];
  // Each line: two status letters, a space and the path.
  const dirty = git('status', '--porcelain', '--', ...sources).split('\n').filter(Boolean).map((line) => line.slice(3));
  const uncommitted = dirty.length > 0;
  if (uncommitted && !process.argv.includes('--allow-dirty')) {
    console.error(`contract:release: refused: not committed: ${dirty.join(', ')}. Commit them first, so that the baseline is the contracts of the commit it names (or pass -- --allow-dirty).`);
    process.exitCode = 2;
    return;
  }
  const files: string[] = [];
  for (const { current, baseline } of contracts) {
    mkdirSync(path.dirname(baseline), { recursive: true });
    cpSync(current, baseline);
    files.push(path.relative(root, baseline));
  }
  // The registry as released: the gate still knows an entry's terms when the change that removes
  // its element drops it.
  // The changelog as released: the gate counts only entries added after it.
  const changelog = path.join(root, 'contracts/CHANGELOG.md');
  if (existsSync(changelog)) {
    cpSync(changelog, path.join(baselineDir, 'CHANGELOG.md'));
    files.push(path.relative(root, path.join(baselineDir, 'CHANGELOG.md')));
  }
  const registry = path.join(root, 'contracts/deprecations.yaml');
  if (existsSync(registry)) {
    cpSync(registry, path.join(baselineDir, 'deprecations.yaml'));
    files.push(path.relative(root, path.join(baselineDir, 'deprecations.yaml')));
  }
  rmSync(protoBaselineDir, { recursive: true, force: true });
  cpSync(protoDir, protoBaselineDir, { recursive: true, filter: (source) => !source.endsWith('buf.gen.yaml') });
  files.push(path.relative(root, protoBaselineDir));
  const release = {
    releasedAt: new Date().toISOString(),
    commit,
    // The contracts had changes not yet committed at `commit` when they were released.
    uncommittedChanges: uncommitted,
    files,
  };
  writeFileSync(releaseFile, `${JSON.stringify(release, null, 2)}\n`);
  console.log(`contract:release: ${files.length} contracts recorded as the baseline (commit ${commit.slice(0, 12)}${release.uncommittedChanges ? ', with uncommitted changes' : ''}, ${release.releasedAt}); commit contracts/v1`);
}
