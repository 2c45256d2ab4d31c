// Stops the stack as Ctrl-C would and drops the e2e databases.
import { Client } from 'pg';
import { stackState } from './stack';

export default async function globalTeardown(): Promise<void> {
  const state = stackState();
  if (state.starterPid) {
    try {
      process.kill(state.starterPid, 'SIGINT');
    } catch {
      // already gone
    }
    for (let i = 0; i < 100; i++) {
      const alive = [state.starterPid, ...Object.values(state.pids)].some((pid) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      });
      if (!alive) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  if (process.env.TEST_DATABASE_URL && state.databases?.length) {
    const admin = new Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    for (const url of state.databases) await admin.query(`DROP DATABASE IF EXISTS "${new URL(url).pathname.slice(1)}" WITH (FORCE)`);
    await admin.end();
  }
}
