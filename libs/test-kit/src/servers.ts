// Database servers a test owns, so it can break them on purpose: a redis-server and a
// PostgreSQL cluster, each in a temp dir on a free loopback port, removed after. The shared
// Redis (TEST_REDIS_URL) only under a key prefix of the test's own.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * TEST_REDIS_URL (set in CI) with a key prefix of the caller's own (ioredis reads `keyPrefix`
 * from the URL), so its counts start empty, as in memory, whoever else uses that Redis;
 * undefined when the variable is not set.
 */
export function testRedisUrl(): string | undefined {
  const shared = process.env.TEST_REDIS_URL;
  if (!shared) return undefined;
  const url = new URL(shared);
  url.searchParams.set('keyPrefix', `test:${randomUUID()}:`);
  return url.toString();
}

/** A loopback port nobody listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Sends `request` to a loopback port and resolves with the first bytes back ('' on no answer). */
function firstReply(port: number, request: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (reply: string) => {
      socket.destroy();
      resolve(reply);
    };
    socket.setTimeout(timeoutMs, () => done(''));
    socket.once('connect', () => socket.write(request));
    socket.once('data', (data) => done(data.toString('utf8')));
    socket.once('error', () => done(''));
  });
}

async function waitFor(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} did not come up in ${timeoutMs} ms`);
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** A redis-server of the test's own: no persistence, so a kill loses every count. */
export class RedisServer {
  private child!: ChildProcess;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort(), mkdtempSync(path.join(tmpdir(), 'test-redis-')));
    try {
      await server.launch();
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Freezes the process (SIGSTOP): connections stay open, nothing answers. */
  pause(): void {
    this.child.kill('SIGSTOP');
  }

  resume(): void {
    this.child.kill('SIGCONT');
  }

  /** SIGKILL: connections drop and every count is lost. */
  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await exited(this.child);
  }

  /** Starts again, empty, on the same port. */
  async restart(): Promise<void> {
    await this.launch();
  }

  async stop(): Promise<void> {
    if (this.child) {
      this.child.kill('SIGKILL'); // also ends a paused process
      await exited(this.child);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], { stdio: 'ignore' });
    const child = this.child;
    await waitFor(`redis-server on ${this.port}`, 10_000, async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      return (await firstReply(this.port, 'PING\r\n', 500)).startsWith('+PONG');
    });
  }
}

/**
 * A nats-server of the test's own with JetStream on, in a temp store dir, on a loopback port
 * (never the shared 4222). `kill` is a SIGKILL; `restart` starts it again on the same port and
 * store, as a broker pod rescheduled onto its volume would.
 */
export interface NatsServerOptions {
  /** nats.conf text (an authorization block, say); its `$VARIABLES` are read from `env`. */
  config?: string;
  env?: Record<string, string>;
}

export class NatsServer {
  private child!: ChildProcess;

  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly options: NatsServerOptions,
  ) {}

  /** On `port`, or a free one. */
  static async start(port?: number, options: NatsServerOptions = {}): Promise<NatsServer> {
    const server = new NatsServer(port ?? (await freePort()), mkdtempSync(path.join(tmpdir(), 'test-nats-')), options);
    try {
      await server.launch();
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await exited(this.child);
  }

  async restart(): Promise<void> {
    await this.launch();
  }

  async stop(): Promise<void> {
    if (this.child) {
      this.child.kill('SIGKILL');
      await exited(this.child);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const configFile = path.join(this.dir, 'nats.conf');
    if (this.options.config !== undefined) writeFileSync(configFile, this.options.config);
    const config = this.options.config === undefined ? [] : ['-c', configFile];
    // The command line's address, port and store win over the file's.
    this.child = spawn('nats-server', [...config, '-a', '127.0.0.1', '-p', String(this.port), '-js', '-sd', this.dir], { stdio: 'ignore', env: { ...process.env, ...this.options.env } });
    const child = this.child;
    // The INFO line comes once the client port listens; JetStream has recovered its store by then.
    await waitFor(`nats-server on ${this.port}`, 30_000, async () => {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode}`);
      return (await firstReply(this.port, '', 500)).startsWith('INFO');
    });
  }
}

const execFileAsync = (file: string, args: string[], options: { cwd: string; uid?: number; gid?: number }) =>
  new Promise<void>((resolve, reject) =>
    execFile(file, args, { ...options, timeout: 60_000 }, (error, _stdout, stderr) => (error ? reject(new Error(`${path.basename(file)} ${args.join(' ')}: ${stderr || error.message}`)) : resolve())),
  );

/** The newest installed PostgreSQL's binaries (Debian's layout). */
function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((name) => existsSync(path.join(root, name, 'bin/initdb'))) : [];
  if (!versions.length) throw new Error(`no PostgreSQL binaries under ${root}/*/bin`);
  versions.sort((a, b) => Number(a) - Number(b));
  return path.join(root, versions[versions.length - 1], 'bin');
}

/** initdb and pg_ctl refuse to run as root: as root, they run as the `postgres` account. */
function postgresAccount(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === 'postgres');
  if (!entry) throw new Error('running as root needs a `postgres` account to run PostgreSQL as');
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

/** A PostgreSQL cluster of the test's own (trust auth, user postgres), stoppable and startable. */
export class PostgresCluster {
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly bin: string,
    private readonly account: { uid: number; gid: number } | undefined,
    private readonly maxConnections: number,
  ) {}

  /** `maxConnections`: PostgreSQL's max_connections (100, its default, unless more processes share the cluster). */
  static async start(options: { maxConnections?: number } = {}): Promise<PostgresCluster> {
    const dir = mkdtempSync(path.join(tmpdir(), 'test-postgres-'));
    const account = postgresAccount();
    if (account) chownSync(dir, account.uid, account.gid);
    const cluster = new PostgresCluster(await freePort(), dir, postgresBinDir(), account, options.maxConnections ?? 100);
    try {
      await execFileAsync(path.join(cluster.bin, 'initdb'), ['-D', cluster.dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], cluster.runAs);
      await cluster.startServer();
    } catch (error) {
      await cluster.remove();
      throw error;
    }
    return cluster;
  }

  /** A URL for `database` on this cluster. */
  url(database = 'postgres'): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the stopped server again, on the same port and data. */
  async startServer(): Promise<void> {
    // Durability is not what these tests are about: skip the fsyncs.
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=${this.maxConnections}`;
    await execFileAsync(path.join(this.bin, 'pg_ctl'), ['-D', this.dataDir, '-o', options, '-l', path.join(this.dir, 'server.log'), '-w', '-t', '30', 'start'], this.runAs);
  }

  /** Stops the server (`fast`: open sessions are cut, as in a failover or a crash of the host). */
  async stopServer(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await execFileAsync(path.join(this.bin, 'pg_ctl'), ['-D', this.dataDir, '-m', mode, '-w', '-t', '30', 'stop'], this.runAs);
  }

  /** Stops the server if it runs (even half-started) and deletes the cluster. */
  async remove(): Promise<void> {
    if (existsSync(path.join(this.dataDir, 'postmaster.pid'))) await this.stopServer('immediate').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** In the cluster's own directory: the `postgres` account may not enter the caller's. */
  private get runAs() {
    return { cwd: this.dir, ...this.account };
  }

  private get dataDir(): string {
    return path.join(this.dir, 'data');
  }
}
