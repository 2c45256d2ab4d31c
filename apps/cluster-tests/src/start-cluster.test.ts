// `npm run start:cluster` (tools/start/cluster.ts) when the cluster cannot start: it says why,
// exits 1 and leaves nothing running, the nats-server it started for the cluster included (one
// left behind holds a port and a JetStream store in the temporary directory until killed by hand).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { clusterPorts, PostgresCluster, workspaceRoot } from '@platform/test-kit';

/** Beside cluster.test.ts's 12000: this file never gets as far as starting a replica. */
const OFFSET = Number(process.env.CLUSTER_PORT_OFFSET ?? 12_000) + 500;

/** The processes running in `dir` (their working directory): the script's children inherit it. */
function processesIn(dir: string): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return readlinkSync(`/proc/${entry}/cwd`) === dir ? [Number(entry)] : [];
    } catch {
      return []; // gone, or not ours to read
    }
  });
}

it('exits 1 naming the taken ports, and leaves no nats-server behind', async () => {
  const root = workspaceRoot();
  const dir = mkdtempSync(path.join(tmpdir(), 'start-cluster-'));
  const postgres = await PostgresCluster.start();
  let door: Server | undefined;
  try {
    // Another process holds the API door.
    const taken = clusterPorts(OFFSET).door.gateway;
    door = createServer();
    await new Promise<void>((resolve) => door?.listen(taken, '127.0.0.1', resolve));
    const script = spawn(process.execPath, [path.join(root, 'tools/ts-run.mjs'), path.join(root, 'tools/start/cluster.ts')], {
      cwd: dir,
      env: { ...process.env, SKIP_BUILD: 'true', PORT_OFFSET: String(OFFSET), DATABASE_SERVER_URL: postgres.url(), APOLLO_TELEMETRY_DISABLED: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    script.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    script.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => script.on('exit', resolve));
    expect({ code, output }).toEqual({ code: 1, output: expect.stringContaining(`failed: ports already in use on 127.0.0.1: ${taken}`) });
    expect(processesIn(dir)).toEqual([]);
  } finally {
    for (const pid of processesIn(dir)) process.kill(pid, 'SIGKILL');
    await new Promise((resolve) => (door ? door.close(resolve) : resolve(undefined)));
    await postgres.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
