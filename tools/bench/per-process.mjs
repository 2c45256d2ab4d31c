#!/usr/bin/env node
// What one call costs each process of the stack, and how many SQL statements it sends each
// database: REST GET /v1/orders/{id} against GraphQL order(id) (and GET /v1/products/{id}),
// through the gateway, every feature on as in gateway.mjs. Each process's CPU time is read from
// /proc before and after a saturated run (20 connections); statements are PostgreSQL's
// `xact_commit` per database (every statement outside a transaction is one), read after the
// statistics have been flushed. Loopback only; bounded by duration.
// Usage: node tools/bench/per-process.mjs [seconds per case and round, default 10] [rounds, default 2]
import { execFileSync } from 'node:child_process';
import autocannon from 'autocannon';
import { benchCaller, cpuMsOf, orderSummaryQuery, port, startFeatureStack, table } from './stack.mjs';

process.env.APOLLO_TELEMETRY_DISABLED = 'true';
const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 2);
const WARM_UP_SECONDS = 3;
/** A backend that goes idle sends its statistics within 10 s (PostgreSQL's PGSTAT_IDLE_INTERVAL). */
const STATS_FLUSH_MS = 11_000;

const stack = await startFeatureStack();
const { databases } = stack;
try {
  const base = `http://127.0.0.1:${port(8080)}`;
  const { auth, product, order } = await benchCaller(base);
  const cases = {
    'REST GET /v1/orders/{id}': { url: `${base}/v1/orders/${order.id}`, headers: auth },
    'GraphQL order(id)': { url: `${base}/v1/graphql`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: orderSummaryQuery(order.id) }) },
    'REST GET /v1/products/{id}': { url: `${base}/v1/products/${product.id}`, headers: auth },
  };
  const statements = async () => {
    await new Promise((resolve) => setTimeout(resolve, STATS_FLUSH_MS));
    return Object.fromEntries(Object.entries(databases.urls).map(([service, url]) => [service, Number(execFileSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-Atc', `select xact_commit from pg_stat_database where datname = '${new URL(url).pathname.slice(1)}'`]).toString())]));
  };
  const rows = [];
  for (let round = 1; round <= rounds; round++) {
    for (const [name, request] of Object.entries(cases)) {
      await autocannon({ ...request, connections: 20, duration: WARM_UP_SECONDS });
      const statementsBefore = await statements();
      const cpuBefore = Object.fromEntries(Object.entries(stack.pids).map(([app, pid]) => [app, cpuMsOf(pid)]));
      const result = await autocannon({ ...request, connections: 20, duration: seconds });
      if (result.non2xx || result.errors) throw new Error(`${name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      const calls = result.requests.total;
      const cpu = Object.fromEntries(Object.entries(stack.pids).map(([app, pid]) => [`${app} µs`, Math.round(((cpuMsOf(pid) - cpuBefore[app]) * 1000) / calls)]));
      const statementsAfter = await statements();
      const sql = Object.keys(statementsAfter).map((service) => `${service} ${((statementsAfter[service] - statementsBefore[service]) / calls).toFixed(2)}`).join(', ');
      rows.push({ case: name, round, 'req/s': Math.round(result.requests.average), ...cpu, 'statements per call': sql });
      console.log(`[bench] ${name}, round ${round}: ${Math.round(result.requests.average)} req/s`);
    }
  }
  console.log(`\nCPU per call by process and SQL statements per call by database, ${seconds} s per case and round, 20 connections, ${new Date().toISOString()}\n\n${table(rows)}`);
} finally {
  await stack.stop();
}
