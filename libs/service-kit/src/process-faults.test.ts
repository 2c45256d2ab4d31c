// What happens to a service process when an error escapes every handler: runService's fault
// handling, seen from outside a real process.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

const root = path.resolve(__dirname, '../../..');
let child: ChildProcess;
const logLines: Record<string, unknown>[] = [];

/** Starts the fixture service and resolves with its URL once it logs that it is ready. */
async function startFaultyService(): Promise<string> {
  child = spawn(process.execPath, [path.join(root, 'tools/ts-run.mjs'), path.join(__dirname, 'process-faults.fixture.ts')], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'info', APOLLO_TELEMETRY_DISABLED: 'true' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stdout = child.stdout;
  if (!stdout) throw new Error('no stdout');
  return new Promise((resolve, reject) => {
    createInterface({ input: stdout }).on('line', (line) => {
      const entry = JSON.parse(line) as Record<string, unknown>;
      logLines.push(entry);
      if (entry.msg === 'faulty-service ready') resolve(`http://127.0.0.1:${entry.port as number}`);
    });
    child.once('exit', (code) => reject(new Error(`the fixture exited (${code}) before it was ready`)));
  });
}

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
});

it('ends only the request an operational fault belongs to and serves on; exits on a programmer error', async () => {
  const url = await startFaultyService();

  const faulted = await fetch(`${url}/socket-fault`);
  expect(faulted.status).toBe(500);
  expect(await faulted.json()).toMatchObject({ code: 'INTERNAL', traceId: expect.stringMatching(/^[\da-f]{32}$/), errors: [] });
  expect((await fetch(`${url}/alive`)).status).toBe(200);
  expect(logLines.find((entry) => entry.level === 'warn' && String(entry.msg).startsWith('operational fault'))).toMatchObject({ err: { message: 'read ECONNRESET' } });

  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await expect(fetch(`${url}/bug`)).rejects.toThrow();
  expect(await exited).toBe(1);
  expect(logLines.find((entry) => entry.level === 'fatal')).toMatchObject({ msg: 'programmer error: exiting', err: { type: 'TypeError' } });
});

it('refuses a bad configuration with one JSON line naming every bad variable, exit code 1, no stack trace', async () => {
  const stderr: Buffer[] = [];
  const bad = spawn(process.execPath, [path.join(root, 'tools/ts-run.mjs'), path.join(__dirname, 'process-faults.fixture.ts')], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'loud', REQUEST_TIMEOUT_MS: '-5' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: Buffer[] = [];
  bad.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  bad.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const code = await new Promise((resolve) => bad.once('exit', resolve));
  expect(code).toBe(1);
  const lines = Buffer.concat(stdout).toString('utf8').trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0])).toMatchObject({
    level: 'fatal',
    service: 'faulty-service',
    msg: 'invalid configuration: the process cannot start',
    problems: [{ variable: 'LOG_LEVEL', problem: expect.any(String) }, { variable: 'REQUEST_TIMEOUT_MS', problem: expect.any(String) }],
  });
  expect(Buffer.concat(stderr).toString('utf8')).not.toMatch(/\bat \S+ \(/); // no stack frame anywhere
});
