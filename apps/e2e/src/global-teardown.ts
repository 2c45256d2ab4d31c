// Stops the stack as Ctrl-C would and drops the e2e databases.
import { dropDatabases, stopStackProcesses } from '@platform/test-kit';
import { stackState } from './stack';

export default async function globalTeardown(): Promise<void> {
  const state = stackState();
  if (state.starterPid) await stopStackProcesses(state.starterPid, Object.values(state.pids));
  if (process.env.TEST_DATABASE_URL && state.databases?.length) await dropDatabases(process.env.TEST_DATABASE_URL, state.databases);
}
