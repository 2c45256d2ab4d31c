// Proves the CI proto check can fail: a renumbered field in a new commit is refused.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const script = path.join(root, 'tools/proto/check-breaking.sh');
const protoFile = 'proto/inventory/v1/inventory.proto';

function repoWithCommittedProto(): string {
  const repo = mkdtempSync(path.join(tmpdir(), 'proto-check-'));
  cpSync(path.join(root, 'proto'), path.join(repo, 'proto'), { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: repo, stdio: 'pipe' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'proto as committed');
  return repo;
}

function commitChange(repo: string, change: (text: string) => string): void {
  const file = path.join(repo, protoFile);
  writeFileSync(file, change(readFileSync(file, 'utf8')));
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-qam', 'change'], { cwd: repo });
}

function check(repo: string) {
  return spawnSync(script, [], { cwd: repo, env: { ...process.env, PROTO_REPO: repo }, encoding: 'utf8' });
}

/** buf's findings, each without its file:line:column prefix (the line moves as the file grows). */
function findings(output: string): string[] {
  return output
    .split('\n')
    .filter(Boolean)
    .map((line) => line.replace(/^proto\/inventory\/v1\/inventory\.proto:\d+:\d+:/, ''));
}

describe('proto breaking-change check', () => {
  it('fails when a field is renumbered', () => {
    const repo = repoWithCommittedProto();
    commitChange(repo, (text) => text.replace('string sku = 4;', 'string sku = 5;'));
    const result = check(repo);
    expect(result.status).toBe(100); // buf's exit status for breaking changes
    expect(findings(result.stdout)).toEqual([
      'Previously present field "4" with name "sku" on message "ReserveRequest" was deleted without reserving the name "sku".',
      'Previously present field "4" with name "sku" on message "ReserveRequest" was deleted without reserving the number "4".',
    ]);
  });

  it('fails when the reserved former item_id number is reused', () => {
    const repo = repoWithCommittedProto();
    commitChange(repo, (text) => text.replace('  reserved 2;\n  reserved "item_id";\n', '  string item_ref = 2;\n'));
    const result = check(repo);
    expect(result.status).toBe(100);
    expect(findings(result.stdout)).toEqual([
      'Previously present reserved name "item_id" on message "ReserveRequest" was deleted.',
      'Previously present reserved range "[2]" on message "ReserveRequest" is missing values: [2] were removed.',
    ]);
  });

  it('passes when a field is added with a new number', () => {
    const repo = repoWithCommittedProto();
    commitChange(repo, (text) => text.replace('  string sku = 4;\n}', '  string sku = 4;\n  string warehouse = 5;\n}'));
    const result = check(repo);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^proto: no breaking change against [\da-f]{12}\n$/);
    expect(result.status).toBe(0);
  });
});
