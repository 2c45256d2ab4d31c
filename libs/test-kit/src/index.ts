// Test-only helpers shared by the suites: an HTTP client that returns what a client sees,
// tokens for made-up users, bounded load, throwaway Redis, PostgreSQL and NATS servers, and the whole
// stack started as `npm start` does (e2e and fault tests), and the cluster of two replicas of
// every app behind HAProxy (`npm run start:cluster`, cluster tests), and the field lists each
// subgraph's answers.test.ts holds to REST's.
import { issueAccessToken, type Role } from '@platform/auth';
import { newId } from '@platform/ids';
import type { CallOptions } from './traffic';

export { percentile, runBounded } from './load';
export { freePort, NatsServer, type NatsServerOptions, PostgresCluster, RedisServer, testRedisUrl } from './servers';
export { connects, otherAddresses } from './reachability';
export { PROMPT_REFUSAL_MS, timeAnswer, type TimedAnswer } from './timed-answer';
export { rateLimitField } from './rate-limit-field';
export { clockMovingOnDelete, whileClockMoves } from './moving-clock';
export { type Answer, between, brief, type CallOptions, type Door, door, tally, Traffic } from './traffic';
export { alive, createDatabases, dropDatabases, ensureDatabases, Stack, stackPorts, stopStackProcesses, workspaceRoot, type StackOptions } from './stack';
export { expectedFields, type FieldDifferences, sdlFields } from './field-lists';
export { CLUSTER_APPS, CLUSTER_DRAIN_MS, Cluster, clusterPorts, HEALTH_CHECK_MS, haproxyConfig, REPLICAS, serverName, type ClusterApp, type ClusterOptions, type ServerState } from './cluster';

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON (undefined for an empty body). */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}


export type ApiClient = (method: string, path: string, options?: CallOptions) => Promise<ApiResponse>;

/** One request and what came back, as `onResponse` sees it. */
export interface Exchange {
  method: string;
  path: string;
  response: ApiResponse;
}

/** `onResponse` sees every raw body (e.g. to prove no secret ever leaves) and the whole exchange (e.g. to check it against the contract). */
export function apiClient(baseUrl: () => string, onResponse?: (text: string, exchange: Exchange) => void): ApiClient {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${baseUrl()}${path}`, { method, headers, body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body) });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const response = { status: res.status, headers: res.headers, text, body };
    onResponse?.(text, { method, path, response });
    return response;
  };
}

/** A signed token for a made-up user, as users-service would issue it. */
export async function tokenFor(secret: string, role: Role = 'customer', userId: string = newId()): Promise<{ token: string; userId: string }> {
  const { accessToken } = await issueAccessToken(secret, { userId, role }, 3600);
  return { token: accessToken, userId };
}
