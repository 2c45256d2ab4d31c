// The whole platform for suites that drive it as a client (e2e, fault tests): started with
// tools/start/start.js, the script behind `npm start`, on already built apps (SKIP_BUILD), on
// ports of its own (PORT_OFFSET), on the databases and Redis the suite gives it.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { Client } from 'pg';

/**
 * The repository's root: the nearest folder up with nx.json. Found rather than fixed, because
 * this code also runs bundled elsewhere (tools/ts-run.mjs writes it under tmp/).
 */
export function workspaceRoot(from = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'nx.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no nx.json above ${from}`);
  }
}

const root = workspaceRoot();
const SERVICES_WITH_DATABASES = ['USERS', 'ORDERS', 'CATALOG', 'INVENTORY'];

/** Where a stack started with `offset` listens (start.js's layout). */
export function stackPorts(offset: number) {
  const grpc = 50051 + offset <= 65535 ? 50051 + offset : 3005 + offset;
  return { gateway: 8080 + offset, metrics: 9464 + offset, users: 3001 + offset, orders: 3002 + offset, catalog: 3003 + offset, inventory: 3004 + offset, grpc };
}

/** One fresh database per service on `serverUrl`, as the DATABASE_URL_<APP> variables start.js reads. */
export async function createDatabases(serverUrl: string, prefix: string): Promise<Record<string, string>> {
  const suffix = randomBytes(4).toString('hex');
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const urls: Record<string, string> = {};
    for (const service of SERVICES_WITH_DATABASES) {
      const name = `${prefix}_${service.toLowerCase()}_${suffix}`;
      await admin.query(`CREATE DATABASE "${name}"`);
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      urls[`DATABASE_URL_${service}`] = url.toString();
    }
    return urls;
  } finally {
    await admin.end();
  }
}

/**
 * Creates each database named by `urls` (e.g. DATABASE_URL_<APP> values) that does not exist yet,
 * through the `postgres` database of its server; one that exists is left as it is.
 */
export async function ensureDatabases(urls: string[]): Promise<void> {
  for (const url of urls) {
    const name = decodeURIComponent(new URL(url).pathname.slice(1));
    const server = new URL(url);
    server.pathname = '/postgres';
    const admin = new Client({ connectionString: server.toString() });
    await admin.connect();
    try {
      const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!rowCount) await admin.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`);
    } finally {
      await admin.end();
    }
  }
}

export async function dropDatabases(serverUrl: string, urls: string[]): Promise<void> {
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    for (const url of urls) await admin.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/** Whether process `pid` is still running. */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * Stops a stack as Ctrl-C would (start.js stops its apps, SIGKILL after 15 s), then kills what
 * is left. By process id, so a teardown running in another context than the setup can call it.
 */
export async function stopStackProcesses(starterPid: number, appPids: number[]): Promise<void> {
  if (alive(starterPid)) process.kill(starterPid, 'SIGINT');
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && [starterPid, ...appPids].some(alive)) await new Promise((resolve) => setTimeout(resolve, 100));
  for (const pid of [starterPid, ...appPids]) if (alive(pid)) process.kill(pid, 'SIGKILL');
}

export interface StackOptions {
  offset: number;
  /** The whole environment of start.js (and so of every app). */
  env: NodeJS.ProcessEnv;
  /** start.js's output, every app's log lines included. */
  logFile: string;
  /** Only these apps (START_APPS), e.g. to start one again after killing it. */
  apps?: string[];
  readyTimeoutMs?: number;
}

/** A running start.js and the apps it started. */
export class Stack {
  /** App name → process id. */
  readonly pids: Record<string, number> = {};
  private readonly watchers = new Set<(line: string) => void>();

  private constructor(
    /** start.js's process id. */
    readonly starterPid: number,
  ) {}

  static async start(options: StackOptions): Promise<Stack> {
    mkdirSync(path.dirname(options.logFile), { recursive: true });
    const log = createWriteStream(options.logFile);
    const env: NodeJS.ProcessEnv = { ...options.env, PORT_OFFSET: String(options.offset), SKIP_BUILD: 'true', APOLLO_TELEMETRY_DISABLED: 'true' };
    if (options.apps) env.START_APPS = options.apps.join(',');
    else delete env.START_APPS;
    const starter = spawn(process.execPath, [path.join(root, 'tools/start/start.js')], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    if (starter.pid === undefined) throw new Error('could not run tools/start/start.js');
    starter.stderr.pipe(log);
    const stack = new Stack(starter.pid);
    readline.createInterface({ input: starter.stdout }).on('line', (line) => {
      log.write(`${line}\n`);
      const pid = /\[start\]\S* (\S+) pid (\d+)/.exec(line);
      if (pid) stack.pids[pid[1]] = Number(pid[2]);
      for (const watcher of stack.watchers) watcher(line);
    });
    const timeoutMs = options.readyTimeoutMs ?? 90_000;
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the stack did not become ready in ${timeoutMs / 1000} s; see ${options.logFile}`)), timeoutMs);
        const watcher = (line: string) => {
          if (/all \d+ apps ready/.test(line)) {
            clearTimeout(timer);
            stack.watchers.delete(watcher);
            resolve();
          }
          // start.js's own verdicts only: an app's log line may say "failed" (a retried call) while it starts.
          if (/\[start\]/.test(line) && /not ready|failed|exited/.test(line)) {
            clearTimeout(timer);
            reject(new Error(`the stack failed to start: ${line}; see ${options.logFile}`));
          }
        };
        stack.watchers.add(watcher);
        starter.once('exit', (code) => reject(new Error(`start.js exited with ${code}; see ${options.logFile}`)));
      });
    } catch (error) {
      // Leave nothing running: start.js stops the apps it started before it exits.
      await stack.stop();
      throw error;
    }
    return stack;
  }

  /** The next line of start.js's own output (or an app's log) that matches, e.g. an app's exit. */
  nextLine(pattern: RegExp, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.watchers.delete(watcher);
        reject(new Error(`no line matching ${pattern} in ${timeoutMs} ms`));
      }, timeoutMs);
      const watcher = (line: string) => {
        if (!pattern.test(line)) return;
        clearTimeout(timer);
        this.watchers.delete(watcher);
        resolve(line);
      };
      this.watchers.add(watcher);
    });
  }

  async stop(): Promise<void> {
    await stopStackProcesses(this.starterPid, Object.values(this.pids));
  }
}
