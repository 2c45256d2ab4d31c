// Stops the stack as Ctrl-C would, drops the e2e databases and closes the span receiver.
import type { Server } from 'node:http';
import { dropDatabases, stopStackProcesses } from '@platform/test-kit';
import { reportContractCounts } from './contract';
import { stackState } from './stack';

export default async function globalTeardown(): Promise<void> {
  reportContractCounts();
  const state = stackState();
  if (state.starterPid) await stopStackProcesses(state.starterPid, Object.values(state.pids));
  if (process.env.TEST_DATABASE_URL && state.databases?.length) await dropDatabases(process.env.TEST_DATABASE_URL, state.databases);
  (globalThis as { spanReceiver?: Server }).spanReceiver?.close();
}
