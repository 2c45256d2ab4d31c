// The production topology on one machine: two replicas of every app behind HAProxy (Debian's
// `haproxy`, run as a process of our own with a config generated into a temp dir, never as the
// system service). HAProxy is the one door for clients (the REST/GraphQL port and the inventory
// gRPC port) and also the way the apps reach each other: the gateways call each service, and
// orders calls inventory over gRPC (HTTP/2 end to end), through a frontend of its own, so every
// hop is balanced round robin over the replicas that pass their /readyz check.
//
// Each replica set is a Stack (tools/start/start.js, as `npm start`) at an offset of its own,
// told to call its peers where HAProxy listens (UPSTREAM_PORT_OFFSET). HAProxy takes the ports a
// single stack at `offset` would have; replica n listens at `offset + 100 n`.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { alive, Stack, stackPorts } from './stack';

export const REPLICAS = 2;
export const CLUSTER_APPS = ['inventory-service', 'catalog-service', 'users-service', 'orders-service', 'gateway'] as const;
export type ClusterApp = (typeof CLUSTER_APPS)[number];
type Ports = ReturnType<typeof stackPorts>;

/**
 * How often HAProxy asks each replica's /readyz, and how long a replica told to stop keeps
 * serving after its readiness fails (SHUTDOWN_DRAIN_MS). Two failed checks take a replica out
 * (`fall 2`): one check that timed out while the machine stalled must not take out a healthy
 * replica while its peer is draining, which would leave none. The drain outlasts those two checks
 * with their timeouts, so no new request reaches a replica about to close its listener.
 */
export const HEALTH_CHECK_MS = 250;
const HEALTH_CHECK_TIMEOUT_MS = 1_000;
export const CLUSTER_DRAIN_MS = 3_000;

/** HAProxy's backends: which app, which of its ports, and the frontend port it is reached at. */
const BACKENDS: { name: string; app: ClusterApp; port: (ports: Ports) => number; grpc?: true }[] = [
  { name: 'gateway', app: 'gateway', port: (ports) => ports.gateway },
  { name: 'users', app: 'users-service', port: (ports) => ports.users },
  { name: 'orders', app: 'orders-service', port: (ports) => ports.orders },
  { name: 'catalog', app: 'catalog-service', port: (ports) => ports.catalog },
  { name: 'inventory', app: 'inventory-service', port: (ports) => ports.inventory },
  { name: 'inventory-grpc', app: 'inventory-service', port: (ports) => ports.grpc, grpc: true },
];

/** Where the cluster at `offset` listens: HAProxy's doors and each replica set's own ports. */
export function clusterPorts(offset: number) {
  const door = stackPorts(offset);
  return {
    /** HAProxy: `gateway` and `grpc` are the public doors; the service ports are for the apps. */
    door,
    /** HAProxy's statistics page (`/`, `/;csv`) and Prometheus metrics (`/metrics`). */
    stats: door.metrics,
    replicaOffsets: Array.from({ length: REPLICAS }, (_, index) => offset + 100 * (index + 1)),
    replicas: Array.from({ length: REPLICAS }, (_, index) => stackPorts(offset + 100 * (index + 1))),
  };
}

/** The server name HAProxy gives replica `index` (0-based) of `backend`, as X-Served-By shows it. */
export const serverName = (backend: string, index: number) => `${backend}-${index + 1}`;

/** HAProxy's configuration for the cluster at `offset`. */
export function haproxyConfig(offset: number): string {
  const { door, stats, replicas } = clusterPorts(offset);
  const lines = [
    'global',
    '  maxconn 4096',
    // A port another process holds is an error, not a port shared with it (SO_REUSEPORT).
    '  noreuseport',
    // To haproxy.log: every server going down or up, and every request that did not end well.
    '  log stderr format iso local0 info',
    '',
    'defaults',
    '  mode http',
    '  log global',
    '  option httplog',
    '  option dontlog-normal',
    '  option log-health-checks',
    // Keep-alive on both sides (HAProxy's default, written down): the gateways hold pooled
    // connections to the service frontends, and HAProxy reuses its connections to the replicas.
    '  option http-keep-alive',
    '  timeout connect 1s',
    '  timeout client 60s',
    '  timeout server 30s',
    '  timeout http-request 10s',
    '  timeout http-keep-alive 60s',
    '  timeout queue 5s',
    `  timeout check ${HEALTH_CHECK_TIMEOUT_MS}`,
    // A request whose connection could not be made goes to another replica (redispatch). Reads
    // (GET, HEAD) are also sent again when the replica closed without answering or answered
    // 502/503/504; anything else only when nothing of it reached a replica, since a replica that
    // got a POST may have acted on it (a client retries those with its Idempotency-Key): each
    // backend turns the other retries off for it (disable-l7-retry).
    '  retries 3',
    '  option redispatch 1',
    '  retry-on conn-failure empty-response response-timeout 502 503 504',
    // Every replica is asked GET /readyz; two failures take it out, two successes put it back.
    '  option httpchk',
    '  http-check send meth GET uri /readyz',
    '  http-check expect status 200',
    `  default-server check inter ${HEALTH_CHECK_MS} fastinter ${HEALTH_CHECK_MS} downinter ${HEALTH_CHECK_MS} fall 2 rise 2`,
    '',
    'frontend stats',
    `  bind 127.0.0.1:${stats}`,
    '  http-request use-service prometheus-exporter if { path /metrics }',
    '  stats enable',
    '  stats uri /',
    '  stats refresh 5s',
    '',
  ];
  for (const backend of BACKENDS) {
    const front = backend.port(door);
    lines.push(`frontend ${backend.name}`);
    lines.push(`  bind 127.0.0.1:${front}${backend.grpc ? ' proto h2' : ''}`);
    // Client IPs for the gateway's per-IP limits (it trusts loopback proxies: TRUST_PROXY).
    if (backend.name === 'gateway') lines.push('  option forwardfor');
    // gRPC streams (WatchStock) stay open as long as the watcher wants.
    if (backend.grpc) lines.push('  timeout client 1h');
    lines.push(`  default_backend ${backend.name}`, '');
    lines.push(`backend ${backend.name}`, '  balance roundrobin', '  http-request disable-l7-retry if !METH_GET');
    if (backend.grpc) lines.push('  timeout server 1h');
    // Which replica answered: the service's name first, then the gateway's (the gateway passes a
    // service's headers on), e.g. "orders-2, gateway-1"; on gRPC, response metadata. Names only
    // of this local cluster.
    if (backend.name === 'gateway') lines.push('  http-response add-header X-Served-By %[srv_name]');
    else lines.push('  http-response set-header X-Served-By %[srv_name]');
    replicas.forEach((ports, index) => {
      const server = `  server ${serverName(backend.name, index)} 127.0.0.1:${backend.port(ports)}`;
      // gRPC replicas speak HTTP/2 without TLS (h2c); their readiness is on their HTTP port.
      lines.push(backend.grpc ? `${server} proto h2 check port ${ports.inventory} check-proto h1` : server);
    });
    lines.push('');
  }
  return lines.join('\n');
}

export interface ClusterOptions {
  offset: number;
  /** Every app's environment: databases (DATABASE_URL_<APP>), REDIS_URL, JWT_SECRET, … */
  env: NodeJS.ProcessEnv;
  /** Logs go here: haproxy.log and one file per replica set (and per restart). */
  logDir: string;
  readyTimeoutMs?: number;
}

/** HAProxy's view of one server: `UP`, `DOWN`, `MAINT`, …, with its check's progress. */
export interface ServerState {
  backend: string;
  server: string;
  status: string;
}

function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer()
      .once('error', () => resolve(true))
      .listen(port, '127.0.0.1', () => probe.close(() => resolve(false)));
  });
}

/** A running cluster: HAProxy and REPLICAS stacks. */
export class Cluster {
  /** Per replica (0-based): app name → process id, restarted apps included. */
  readonly pids: Record<string, number>[] = [];
  private readonly stacks: Stack[] = [];
  private haproxy?: ChildProcess;
  private restarts = 0;

  private constructor(
    private readonly options: ClusterOptions,
    private readonly configDir: string,
  ) {}

  get ports() {
    return clusterPorts(this.options.offset);
  }

  /** HAProxy's public door for REST and GraphQL. */
  get url(): string {
    return `http://127.0.0.1:${this.ports.door.gateway}`;
  }

  /** HAProxy's public door for inventory's gRPC. */
  get grpcAddress(): string {
    return `127.0.0.1:${this.ports.door.grpc}`;
  }

  static async start(options: ClusterOptions): Promise<Cluster> {
    // Every port free first: a replica whose port is taken would find the other process's
    // /readyz answering and pass for started (a second cluster on the same ports, say).
    const { door, replicas } = clusterPorts(options.offset);
    const taken: number[] = [];
    for (const ports of [door, ...replicas]) for (const port of new Set(Object.values(ports))) if (await portTaken(port)) taken.push(port);
    if (taken.length) throw new Error(`ports already in use on 127.0.0.1: ${taken.join(', ')} (another cluster or stack on this offset?)`);
    const cluster = new Cluster(options, mkdtempSync(path.join(tmpdir(), 'cluster-haproxy-')));
    try {
      await cluster.startHaproxy();
      // One replica set after the other: the first migrates the databases and seeds the demo
      // catalog, stock and admin into empty ones; the second finds them done.
      for (let replica = 0; replica < REPLICAS; replica += 1) {
        const stack = await cluster.startStack(replica, undefined, `replica-${replica + 1}`);
        cluster.pids[replica] = { ...stack.pids };
      }
      await cluster.waitForServers('UP', 30_000);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** Every server of every backend as HAProxy sees it now (its statistics CSV). */
  async servers(): Promise<ServerState[]> {
    const csv = await (await fetch(`http://127.0.0.1:${this.ports.stats}/;csv`, { signal: AbortSignal.timeout(2_000) })).text();
    const [header, ...rows] = csv.trim().split('\n');
    const columns = header.replace(/^# /, '').split(',');
    const at = (name: string) => columns.indexOf(name);
    return rows
      .map((row) => row.split(','))
      .filter((cells) => cells[at('svname')] !== 'FRONTEND' && cells[at('svname')] !== 'BACKEND' && cells[at('pxname')] !== 'stats')
      .map((cells) => ({ backend: cells[at('pxname')], server: cells[at('svname')], status: cells[at('status')] }));
  }

  /**
   * SIGTERM to `app` of replica `replica` (as Kubernetes stops a pod), waits for it to exit, starts
   * it again (its database is migrated already) and waits until HAProxy has it back in every
   * backend it serves.
   */
  async restart(app: ClusterApp, replica: number, timeoutMs = 60_000): Promise<{ exitedAfterMs: number; upAfterMs: number }> {
    const started = Date.now();
    const pid = this.pids[replica][app];
    process.kill(pid, 'SIGTERM');
    while (alive(pid)) {
      if (Date.now() - started > timeoutMs) throw new Error(`${app} of replica ${replica + 1} did not exit in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const exitedAfterMs = Date.now() - started;
    this.restarts += 1;
    const stack = await this.startStack(replica, [app], `replica-${replica + 1}-restart-${this.restarts}-${app}`, { SKIP_MIGRATIONS: 'true' });
    this.pids[replica][app] = stack.pids[app];
    const names = BACKENDS.filter((backend) => backend.app === app).map((backend) => serverName(backend.name, replica));
    await this.waitForServers('UP', timeoutMs, names);
    return { exitedAfterMs, upAfterMs: Date.now() - started };
  }

  /** Waits until every server (or those named) has `status`. */
  async waitForServers(status: string, timeoutMs: number, names?: string[]): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: ServerState[] = [];
    while (Date.now() < deadline) {
      last = await this.servers().catch(() => []);
      const watched = last.filter((server) => !names || names.includes(server.server));
      if (watched.length && watched.every((server) => server.status === status)) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`HAProxy servers not ${status} in ${timeoutMs} ms: ${last.map((server) => `${server.backend}/${server.server} ${server.status}`).join(', ')}`);
  }

  /** Stops every app (as Ctrl-C would) and HAProxy, and removes the generated config. */
  async stop(): Promise<void> {
    for (const stack of this.stacks.splice(0).reverse()) await stack.stop().catch((error: unknown) => console.error('cluster: stopping a stack failed', error));
    const haproxy = this.haproxy;
    if (haproxy && haproxy.exitCode === null && haproxy.signalCode === null) {
      const exited = new Promise((resolve) => haproxy.once('exit', resolve));
      haproxy.kill('SIGTERM');
      await exited;
    }
    rmSync(this.configDir, { recursive: true, force: true });
  }

  private async startHaproxy(): Promise<void> {
    const config = path.join(this.configDir, 'haproxy.cfg');
    writeFileSync(config, haproxyConfig(this.options.offset));
    const check = spawnSync('haproxy', ['-c', '-q', '-f', config], { encoding: 'utf8' });
    if (check.error) throw new Error(`haproxy is not installed (apt-get install -y haproxy): ${check.error.message}`);
    if (check.status !== 0) throw new Error(`the generated HAProxy configuration is invalid: ${check.stdout}${check.stderr}`);
    const log = createWriteStream(path.join(this.options.logDir, 'haproxy.log'));
    // -db: in the foreground, one process of ours, stopped with the cluster.
    this.haproxy = spawn('haproxy', ['-db', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.haproxy.stdout?.pipe(log);
    this.haproxy.stderr?.pipe(log);
    // Listening once its statistics answer and it still runs: a port taken makes it exit at once.
    const haproxy = this.haproxy;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const answers = await this.servers().then(
        () => true,
        () => false,
      );
      if (haproxy.exitCode !== null || Date.now() > deadline) throw new Error(`haproxy did not start; see ${path.join(this.options.logDir, 'haproxy.log')}`);
      if (answers) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  private async startStack(replica: number, apps: ClusterApp[] | undefined, logName: string, env: NodeJS.ProcessEnv = {}): Promise<Stack> {
    const stack = await Stack.start({
      offset: this.ports.replicaOffsets[replica],
      // LISTEN_HOST: the replicas listen on loopback only, where HAProxy reaches them, so that it is the
      // one door (0.0.0.0, the default, is for containers).
      env: { SHUTDOWN_DRAIN_MS: String(CLUSTER_DRAIN_MS), ...this.options.env, ...env, LISTEN_HOST: '127.0.0.1', UPSTREAM_PORT_OFFSET: String(this.options.offset) },
      logFile: path.join(this.options.logDir, `${logName}.log`),
      apps,
      readyTimeoutMs: this.options.readyTimeoutMs,
    });
    this.stacks.push(stack);
    return stack;
  }
}

