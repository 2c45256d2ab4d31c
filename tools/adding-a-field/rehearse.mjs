#!/usr/bin/env node
// Follows the rehearsed walk-through of docs/adding-a-field.md word for word: on a scratch git
// worktree of HEAD it applies each instruction as written ("In `file`, [inside `line`,] after the
// line `line`, add:" and a code block; "In `file`, replace `text` with `text`."; "Run `command`."),
// then runs the commands of the guide's "Check" block. A guide that drifted from the code (a line
// that moved, a step that is missing) fails here instead of in a newcomer's hands.
//
//   node tools/adding-a-field/rehearse.mjs                   the guide, then its checks: all must pass
//   node tools/adding-a-field/rehearse.mjs --leave-one-out   also, for each instruction before the
//                                                            tests, the guide without it and without the
//                                                            new tests: a standing check must fail
//   --guide <file> --at <commit>                             another text of the guide, on another commit
//                                                            (how the "before" figures were measured)
//   --keep                                                   leave the scratch worktree for a look
//
// Heavy (typecheck, the orders suite): run it under the shared lock, e.g.
// `flock /tmp/cpu.lock timeout 900 node tools/adding-a-field/rehearse.mjs --leave-one-out`.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '../..');
const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const guideFile = path.resolve(option('--guide') ?? path.join(repo, 'docs/adding-a-field.md'));
const commit = option('--at') ?? 'HEAD';
const scratch = path.resolve(repo, '..', `${path.basename(repo)}.rehearsal`);
const env = { ...process.env, NX_NO_CLOUD: 'true', NX_DAEMON: 'false', NX_TUI: 'false', APOLLO_TELEMETRY_DISABLED: 'true', FORCE_COLOR: '0' };

/** The instructions between the guide's `rehearsed` markers, in order, and the checks. */
function readGuide(text) {
  const start = text.indexOf('<!-- rehearsed: start -->');
  const end = text.indexOf('<!-- rehearsed: end -->');
  if (start < 0 || end < start) throw new Error(`${guideFile} has no <!-- rehearsed: start --> ... <!-- rehearsed: end --> section`);
  const lines = text.slice(start, end).split('\n');
  const steps = [];
  let checks = [];
  let heading = '';
  /** The fenced block that starts at or after line `from`: its text and the line after it. */
  const blockAt = (from) => {
    let open = from;
    while (open < lines.length && !lines[open].startsWith('```')) open++;
    let close = open + 1;
    while (close < lines.length && !lines[close].startsWith('```')) close++;
    if (close >= lines.length) throw new Error(`no code block after "${lines[from - 1]}"`);
    return { body: lines.slice(open + 1, close), next: close + 1 };
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let match;
    if ((match = /^### (.+)$/.exec(line))) {
      heading = match[1];
      if (heading === 'Check') checks = blockAt(i + 1).body.filter((command) => command.trim());
    } else if ((match = /^In `([^`]+)`, (?:inside `([^`]+)`, )?after the line `([^`]+)`, add:$/.exec(line))) {
      const { body, next } = blockAt(i + 1);
      steps.push({ heading, text: line, kind: 'insert', file: match[1], inside: match[2], after: match[3], lines: body });
      i = next - 1;
    } else if ((match = /^In `([^`]+)`, replace `([^`]+)` with `([^`]+)`\.$/.exec(line))) {
      steps.push({ heading, text: line, kind: 'replace', file: match[1], from: match[2], to: match[3] });
    } else if ((match = /^Run `([^`]+)`\.$/.exec(line))) {
      steps.push({ heading, text: line, kind: 'run', command: match[1] });
    }
  }
  if (!checks.length) throw new Error('the rehearsed section has no "### Check" block');
  return { steps, checks };
}

function sh(command, cwd = scratch) {
  const began = Date.now();
  const result = spawnSync('bash', ['-c', command], { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}`, ms: Date.now() - began };
}

function must(command, cwd = repo) {
  const result = sh(command, cwd);
  if (!result.ok) throw new Error(`${command} failed:\n${result.output}`);
  return result.output;
}

/** Applies one instruction to the scratch worktree, exactly as written; throws when it does not apply. */
function apply(step) {
  if (step.kind === 'run') {
    const result = sh(step.command);
    if (!result.ok) throw new Error(`"${step.text}" failed:\n${result.output}`);
    return;
  }
  const file = path.join(scratch, step.file);
  const text = fs.readFileSync(file, 'utf8');
  if (step.kind === 'replace') {
    const count = text.split(step.from).length - 1;
    if (count !== 1) throw new Error(`"${step.text}": the text occurs ${count} times in ${step.file}, not once`);
    fs.writeFileSync(file, text.replace(step.from, () => step.to));
    return;
  }
  const lines = text.split('\n');
  /** The lines from `from` on that are `wanted` (or, with `prefix`, begin with it), blanks around them aside. */
  const findLine = (wanted, from, prefix = false) =>
    lines.map((line, index) => (index >= from && (prefix ? line.trim().startsWith(wanted.trim()) : line.trim() === wanted.trim()) ? index : -1)).filter((index) => index >= 0);
  let from = 0;
  if (step.inside) {
    // "inside `export function toOrderResponse(`": the line that begins so.
    const containers = findLine(step.inside, 0, true);
    if (containers.length !== 1) throw new Error(`"${step.text}": the line "${step.inside}" occurs ${containers.length} times in ${step.file}, not once`);
    from = containers[0];
  }
  const anchors = findLine(step.after, from);
  if (!anchors.length) throw new Error(`"${step.text}": no line "${step.after}" in ${step.file}${step.inside ? ` after "${step.inside}"` : ''}`);
  if (!step.inside && anchors.length > 1) throw new Error(`"${step.text}": the line "${step.after}" occurs ${anchors.length} times in ${step.file}; say inside which`);
  lines.splice(anchors[0] + 1, 0, ...step.lines);
  fs.writeFileSync(file, lines.join('\n'));
}

function freshScratch() {
  if (fs.existsSync(scratch)) must(`git worktree remove --force ${JSON.stringify(scratch)}`);
  must(`git worktree add --detach ${JSON.stringify(scratch)} ${commit}`);
  // The repository's packages, hard-linked (as the helpers' worktrees are), and its generated gRPC code.
  must(`cp -al node_modules ${JSON.stringify(path.join(scratch, 'node_modules'))}`);
  if (fs.existsSync(path.join(repo, 'libs/inventory-contract/src/generated'))) must(`cp -r libs/inventory-contract/src/generated ${JSON.stringify(path.join(scratch, 'libs/inventory-contract/src/'))}`);
}

function resetScratch() {
  must('git checkout -q -- . && git clean -fdq', scratch);
}

/** Runs the checks in order; with `stopAtFirstFailure`, only as far as the first that fails. */
function runChecks(checks, stopAtFirstFailure) {
  const results = [];
  for (const command of checks) {
    const result = sh(command);
    results.push({ command, ...result });
    if (!result.ok && stopAtFirstFailure) break;
  }
  return results;
}

/** What a failing check says: the compiler's errors, the stale files, or the failing tests' names. */
function why(output) {
  const lines = output.split('\n').map((line) => line.trim());
  const tests = [...new Set(lines.filter((line) => line.startsWith('● ') && !line.startsWith('● Console')))];
  const telling = tests.length ? tests : lines.filter((line) => /error TS|stale|does not match/.test(line));
  return telling.slice(0, 4).map((line) => line.slice(0, 160)).join(' | ');
}

const { steps, checks } = readGuide(fs.readFileSync(guideFile, 'utf8'));
console.log(`${steps.length} instructions and ${checks.length} checks in ${path.relative(repo, guideFile)}; scratch worktree ${scratch} at ${commit}`);
freshScratch();
let failed = false;
try {
  const began = Date.now();
  for (const step of steps) apply(step);
  const applied = Date.now() - began;
  const touched = must('git status --porcelain --untracked-files=all', scratch).trim().split('\n').filter(Boolean);
  const results = runChecks(checks, false);
  console.log(`\nThe guide, followed: ${touched.length} files touched (applied in ${(applied / 1000).toFixed(1)} s)`);
  for (const entry of touched) console.log(`  ${entry}`);
  for (const result of results) console.log(`  ${result.ok ? 'pass' : 'FAIL'}  ${result.command}  (${(result.ms / 1000).toFixed(1)} s)${result.ok ? '' : `\n        ${why(result.output)}`}`);
  if (results.some((result) => !result.ok)) failed = true;

  if (args.includes('--leave-one-out')) {
    // The new tests are the proof, not a part of the field: they are left out of every run below,
    // so what catches an omission is a check that stands whatever field is added.
    const field = steps.filter((step) => !/^\d+\. Tests$/.test(step.heading));
    console.log('\nEach instruction left out (the others applied, the new tests not): the first check that fails');
    for (const left of field) {
      resetScratch();
      for (const step of field) if (step !== left) apply(step);
      const results = runChecks(checks, true);
      const failing = results.find((result) => !result.ok);
      console.log(`  ${failing ? 'caught ' : 'MISSED '} ${left.heading} — ${left.text.slice(0, 110)}${left.text.length > 110 ? '…' : ''}\n           ${failing ? `${failing.command}: ${why(failing.output)}` : 'every check passed'}`);
      if (!failing) failed = true;
    }
  }
} finally {
  if (args.includes('--keep')) console.log(`\nkept ${scratch}`);
  else must(`git worktree remove --force ${JSON.stringify(scratch)}`);
}
process.exit(failed ? 1 : 0);
