// docs/adding-an-endpoint.md, followed literally on a scratch copy of the repository: each
// `<!-- guide-step -->` block is put where its comment says, each command is run as written, and
// the endpoint must answer, be in the regenerated document and in the gateway's generated routes.
// Then each step is left out in turn, and the check the page names for it must be the first to
// fail, so the page cannot promise a safety net the repository does not have.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';

// Generous: the page's commands run for real (a typecheck, the generator, a test run), then again per step left out.
jest.setTimeout(240_000);

const root = path.resolve(__dirname, '../..');
const guide = readFileSync(path.join(root, 'docs/adding-an-endpoint.md'), 'utf8');

type CheckName = 'typecheck' | 'generator' | 'test';

interface Step {
  /** A file to change (`before`, `after` or `replace` a line, or `append`), or a command to run. */
  attributes: Record<string, string>;
  code: string;
  fails: CheckName;
}

function blocksOf(markdown: string, kind: 'guide-step' | 'guide-check'): { attributes: Record<string, string>; code: string }[] {
  const blocks = [...markdown.matchAll(new RegExp(`<!-- ${kind}((?:[^-]|-(?!->))*)-->\\n\`\`\`\\w*\\n([\\s\\S]*?)\`\`\``, 'g'))];
  return blocks.map(([, attributeText, code]) => ({
    attributes: Object.fromEntries([...attributeText.matchAll(/(\w+)(?:=(?:"([^"]*)"|(\S+)))?/g)].map(([, name, quoted, plain]) => [name, quoted ?? plain ?? ''])),
    code,
  }));
}

const steps: Step[] = blocksOf(guide, 'guide-step').map(({ attributes, code }) => ({ attributes, code, fails: attributes.fails as CheckName }));
const checks = Object.fromEntries(blocksOf(guide, 'guide-check').map(({ attributes, code }) => [attributes.name, code.trim()]));
const describeStep = (step: Step) => (step.attributes.file ? `${step.attributes.file} (${step.code.trim().split('\n')[0].trim()})` : `the command ${step.code.trim()}`);

/** `text` with the block put where the step says; its anchor line must be there exactly once. */
function applied(text: string, step: Step): string {
  const { before, after, replace, append } = step.attributes;
  if (append !== undefined) return text + step.code;
  const lines = text.split('\n');
  const anchor = before ?? after ?? replace;
  const at = lines.indexOf(anchor);
  if (at < 0 || lines.indexOf(anchor, at + 1) >= 0) throw new Error(`${step.attributes.file}: the line ${JSON.stringify(anchor)} is not there exactly once`);
  const block = step.code.replace(/\n$/, '').split('\n');
  if (before !== undefined) lines.splice(at, 0, ...block);
  else if (after !== undefined) lines.splice(at + 1, 0, ...block);
  else lines.splice(at, Number(step.attributes.lines ?? 1), ...block);
  return lines.join('\n');
}

let scratch: string;
/** The page's `prepare` command, run once on the fresh scratch copy. */
let prepared: { ok: boolean; output: string };
// A new user's machine: the embedded default (PGlite, in-memory limits), whatever servers this run's suites use.
const childEnv = { ...process.env, JEST_WORKER_ID: undefined, NODE_OPTIONS: undefined, FORCE_COLOR: '0', TEST_DATABASE_URL: undefined, TEST_REDIS_URL: undefined };

function shell(command: string): { ok: boolean; output: string } {
  const run = spawnSync('bash', ['-c', command], { cwd: scratch, env: childEnv, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

/** Writes the page's changes into the scratch copy, leaving out `omitted`. */
function edit(omitted?: Step): void {
  execFileSync('git', ['checkout', '--', '.'], { cwd: scratch });
  for (const step of steps) {
    if (step === omitted || !step.attributes.file) continue;
    const file = path.join(scratch, step.attributes.file);
    writeFileSync(file, applied(readFileSync(file, 'utf8'), step));
  }
}

/** Runs the page's commands (the generator), leaving out `omitted`. */
function runCommands(omitted?: Step): void {
  for (const step of steps) if (step !== omitted && step.attributes.run !== undefined) shell(step.code);
}

/** How many tests of the endpoint the page's test command ran and passed (0 when it failed). */
function passedTests(): number {
  const { ok, output } = shell(checks.test);
  return ok ? Number(/Tests:.*?(\d+) passed/.exec(output)?.[1] ?? 0) : 0;
}

// The typecheck of a step left out: the files the page changes, checked in one program that keeps
// what did not change between runs (the page's command, `tsc` of the whole app, takes ~10 s).
let previousProgram: ts.Program | undefined;
const sourceFiles = new Map<string, { text: string; file: ts.SourceFile }>();
function typeErrorsInChangedFiles(): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(scratch, 'apps/catalog-service/tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined })!;
  const host = ts.createCompilerHost(config.options);
  host.getSourceFile = (fileName, languageVersion) => {
    const text = ts.sys.readFile(fileName);
    if (text === undefined) return undefined;
    const known = sourceFiles.get(fileName);
    if (known?.text === text) return known.file;
    const file = ts.createSourceFile(fileName, text, languageVersion);
    sourceFiles.set(fileName, { text, file });
    return file;
  };
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, host, oldProgram: previousProgram });
  previousProgram = program;
  const changed = [...new Set(steps.flatMap((step) => step.attributes.file ?? []))].map((file) => program.getSourceFile(path.join(scratch, file))!);
  return changed.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

/**
 * Follows the page without `omitted` and answers the first of its checks to fail, in the order
 * `npm test` meets them, or none. The commands run after the typecheck, which reads none of what
 * they write (the generated files are the gateway's and the SDK's), so a step the typecheck
 * catches costs no generator run.
 */
function firstFailingCheckWithout(omitted: Step): CheckName | 'none' {
  edit(omitted);
  if (typeErrorsInChangedFiles().length > 0) return 'typecheck';
  runCommands(omitted);
  if (!shell('node tools/openapi/generate.mjs --check').ok) return 'generator';
  if (passedTests() === 0) return 'test';
  return 'none';
}

beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), 'guide-endpoint-'));
  execFileSync('git', ['worktree', 'add', '--detach', '--quiet', scratch, 'HEAD'], { cwd: root });
  // The code as it stands, committed or not, is what the page is followed on.
  const uncommitted = execFileSync('git', ['diff', 'HEAD', '--binary'], { cwd: root });
  if (uncommitted.length > 0) execFileSync('git', ['apply', '--whitespace=nowarn'], { cwd: scratch, input: uncommitted });
  execFileSync('git', ['add', '--all'], { cwd: scratch }); // the index is what each run starts from
  symlinkSync(path.join(root, 'node_modules'), path.join(scratch, 'node_modules'));
  // As in a fresh clone, the generated clients (Prisma, gRPC) are not there: they are not in git,
  // and the page's own command must write what its checks need.
  prepared = checks.prepare === undefined ? { ok: false, output: 'the page names no command that writes the generated clients' } : shell(checks.prepare);
});

afterAll(() => {
  if (!scratch) return;
  spawnSync('git', ['worktree', 'remove', '--force', scratch], { cwd: root });
  rmSync(scratch, { recursive: true, force: true });
  spawnSync('git', ['worktree', 'prune'], { cwd: root });
});

describe('docs/adding-an-endpoint.md, followed as written', () => {
  it('has its steps and checks', () => {
    expect(steps.length).toBeGreaterThanOrEqual(6);
    expect(steps.every((step) => ['typecheck', 'generator', 'test'].includes(step.fails))).toBe(true);
    expect(Object.keys(checks).sort()).toEqual(['prepare', 'test', 'typecheck']);
  });

  it('gives an endpoint that typechecks, answers as its test says, and is in the document and the gateway routes', () => {
    expect(prepared).toMatchObject({ ok: true });
    edit();
    runCommands();
    const typecheck = shell(checks.typecheck);
    expect(typecheck.output).toBe('');
    expect(typecheck.ok).toBe(true);
    expect(shell('node tools/openapi/generate.mjs --check').ok).toBe(true);
    expect(passedTests()).toBe(2);

    const document = JSON.parse(readFileSync(path.join(scratch, 'apps/gateway/src/openapi/openapi.json'), 'utf8'));
    expect(document.paths['/products/{id}/similar'].get).toMatchObject({
      operationId: 'getSimilarProducts',
      parameters: expect.arrayContaining([{ name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid', 'x-checks': [{ message: 'must be an id this API issued (a UUID, version 7; upper or lower case)', formerly: ['must be an id this API issued (a lowercase UUID, version 7)'] }] } }, expect.objectContaining({ name: 'size', in: 'query', schema: expect.objectContaining({ minimum: 1, maximum: 20, default: 5 }) })]),
      responses: expect.objectContaining({ 200: expect.objectContaining({ content: { 'application/json': { schema: { $ref: '#/components/schemas/SimilarProducts' } } } }) }),
    });
    expect(document.components.schemas.SimilarProducts).toBeDefined();
    expect(readFileSync(path.join(scratch, 'apps/gateway/src/routing/service-routes.generated.ts'), 'utf8')).toContain(
      JSON.stringify({ pattern: '/products/:id/similar', methods: ['GET'], upstream: 'catalog', resource: 'products' }),
    );
  });

  it('fails the check it names when any one step is left out', () => {
    const caught = steps.map((step) => [describeStep(step), firstFailingCheckWithout(step)]);
    expect(caught).toEqual(steps.map((step) => [describeStep(step), step.fails]));
  });
});
