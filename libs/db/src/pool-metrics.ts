// What an operator asks of a service's PostgreSQL: how long queries take, and whether requests
// wait for a connection. On the pool Prisma's pg adapter uses, as Prometheus metrics.
import type { Pool, PoolClient } from 'pg';
import { Gauge, Histogram, type Registry } from 'prom-client';

/** The statement kinds a query is counted under: bounded, whatever SQL runs. */
const STATEMENTS = new Set(['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'WITH', 'BEGIN', 'COMMIT', 'ROLLBACK']);

function statementOf(query: unknown): string {
  const text = typeof query === 'string' ? query : (query as { text?: unknown } | undefined)?.text;
  const keyword = typeof text === 'string' ? /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() : undefined;
  return keyword && STATEMENTS.has(keyword) ? keyword : 'OTHER';
}

export function observePool(pool: Pool, registry: Registry): void {
  const duration = new Histogram({
    name: 'db_query_duration_seconds',
    help: 'PostgreSQL query latency as the service sees it, by statement kind',
    labelNames: ['statement'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Connections of the PostgreSQL pool: open (total), idle, and requests waiting for one',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
  // Every query of the adapter runs on a pooled client (pool.query checks one out too).
  pool.on('connect', (client: PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const stop = duration.startTimer({ statement: statementOf(args[0]) });
      const result = query(...args);
      if (result instanceof Promise) result.then(() => stop(), () => stop());
      else stop();
      return result;
    };
  });
}
