import path from 'node:path';
import express from 'express';
import { registrySetting } from '@platform/deprecations';
import { loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';
import { rateLimitSettings } from './rate-limit/policies';

/** A setting written as JSON, checked against `schema`. */
function jsonSetting<T extends z.ZodType>(name: string, schema: T) {
  return z
    .string()
    .transform((text, context) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        context.addIssue({ code: 'custom', message: `${name} must be JSON` });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

/**
 * Express `trust proxy` from its text: `true`/`false`, a hop count (`1`: believe the one proxy in
 * front, the Ingress), or a comma-separated list of addresses, subnets (CIDR) and the named ranges
 * `loopback`, `linklocal`, `uniquelocal`. Express reads a string as an address list only, so the
 * text `1` would trust the address 0.0.0.1 (every client then shares the Ingress's address and its
 * rate-limit budget) and `false` would not start; hence numbers and booleans are turned into theirs.
 */
export const trustProxySetting = z
  .string()
  .trim()
  .transform((text, context): boolean | number | string[] => {
    const lower = text.toLowerCase();
    if (lower === 'true' || lower === 'false') return lower === 'true';
    if (/^\d+$/.test(text)) return Number(text);
    const list = text.split(',').map((entry) => entry.trim()).filter(Boolean);
    try {
      express().set('trust proxy', list); // Express's own parser (proxy-addr): the check is the one it will make
    } catch (error) {
      context.addIssue({ code: 'custom', message: `TRUST_PROXY must be true, false, a hop count, or addresses, subnets and loopback/linklocal/uniquelocal, comma-separated (${error instanceof Error ? error.message : String(error)})` });
      return z.NEVER;
    }
    if (list.length === 0) {
      context.addIssue({ code: 'custom', message: 'TRUST_PROXY is empty; write false to trust no proxy' });
      return z.NEVER;
    }
    return list;
  });

/** Connections the gateway keeps to one service, and requests that may wait for one of them. */
const upstreamLimit = z.strictObject({ maxSockets: z.number().int().min(1).default(512), maxQueued: z.number().int().min(0).default(512) });
const upstreamLimits = jsonSetting(
  'UPSTREAM_LIMITS',
  z.strictObject({ users: upstreamLimit.prefault({}), orders: upstreamLimit.prefault({}), catalog: upstreamLimit.prefault({}), inventory: upstreamLimit.prefault({}) }),
);

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      PORT: portSetting(8080),
      METRICS_PORT: portSetting(9464),
      USERS_URL: z.url().default('http://127.0.0.1:3001'),
      /** How long the gateway trusts a user's credential version: a token is refused at most this long after its password changed or its user was deleted. */
      CREDENTIALS_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
      /** How long the gateway trusts users-service's answer about an API key: a revoked key is refused at most this long after the DELETE when the push (Redis) is lost; with it, within about a second. */
      API_KEYS_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
      /** Longest wait for users-service's credential answer once the cached one is older than CREDENTIALS_CACHE_MS; then 503 (fail closed). */
      CREDENTIALS_TIMEOUT_MS: z.coerce.number().int().min(50).max(10_000).default(1_000),
      ORDERS_URL: z.url().default('http://127.0.0.1:3002'),
      CATALOG_URL: z.url().default('http://127.0.0.1:3003'),
      /** inventory-service's HTTP side (stock levels), not its gRPC port. */
      INVENTORY_URL: z.url().default('http://127.0.0.1:3004'),
      /** Unset: rate limits are kept in this process's memory (one replica only). */
      REDIS_URL: z.string().optional(),
      /** A Redis command unanswered this long fails, and rate limits count in memory until Redis answers again. */
      REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(1).default(50),
      /** While Redis is out, how often the gateway sees whether it answers again. */
      REDIS_PROBE_INTERVAL_MS: z.coerce.number().int().min(10).default(1_000),
      /** Each rate limit's points and window (RATE_LIMIT_POINTS, RATE_LIMIT_TOKENS_POINTS, …): named, with their defaults, in the policy table (rate-limit/policies.ts). */
      ...rateLimitSettings,
      /** Express `trust proxy`: which peers' X-Forwarded-For is believed (the ingress): see trustProxySetting. */
      TRUST_PROXY: trustProxySetting.default(['loopback']),
      /**
       * The deprecation registry: which elements answer with Deprecation/Sunset/Link, which are in a
       * brownout or past their sunset (410 GONE). Default: deprecations.yaml beside main.js.
       */
      DEPRECATIONS_FILE: registrySetting(path.join(__dirname, 'deprecations.yaml')),
      /**
       * Per service, `{"orders": {"maxSockets": 512, "maxQueued": 512}}`: past maxSockets requests
       * wait for a connection; past maxQueued waiting, 503 SERVICE_UNAVAILABLE with Retry-After.
       */
      UPSTREAM_LIMITS: upstreamLimits.prefault('{}'),
      /**
       * Browser origins allowed to call the API, comma-separated; `*` stands for one port or host
       * label (`http://localhost:*`, `https://*.example.com`). Unset: this machine's origins in
       * development, none in production. Empty: none.
       */
      CORS_ORIGINS: z
        .string()
        .transform((text) => text.split(',').map((origin) => origin.trim()).filter(Boolean))
        .optional(),
      /**
       * GraphQL documents by hash (apps/gateway/src/graphql/operations, built into a manifest):
       * `allow` lets clients send a trusted document's hash instead of its text; `only` runs
       * trusted documents and nothing else (recommended in production once clients send hashes);
       * `off` ignores hashes.
       */
      GRAPHQL_TRUSTED_DOCUMENTS: z.enum(['off', 'allow', 'only']).default('allow'),
      /** Requests one caller (user id, or client IP without a token) may have in flight; the excess is 429. */
      MAX_IN_FLIGHT_PER_CALLER: z.coerce.number().int().min(1).default(64),
      /**
       * A request body is read whole before its request takes a connection to a service, and must
       * arrive at a minimum rate (as Apache's mod_reqtimeout `body=…,MinRate=…`): within
       * CLIENT_BODY_TIMEOUT_MS, plus one second for every CLIENT_BODY_MIN_RATE bytes received.
       * Slower: 408 REQUEST_TIMEOUT and the connection closed.
       */
      CLIENT_BODY_TIMEOUT_MS: z.coerce.number().int().min(1).default(5_000),
      CLIENT_BODY_MIN_RATE: z.coerce.number().int().min(1).default(1_024),
      /**
       * Connections the public port holds at once, all peers together. One holding an unfinished
       * 64 KiB request head costs about 95 KiB (13 KiB idle), so 2,048 bound that to about 190 MiB,
       * however many addresses send them: within the pod's 640 MiB over its 240 MiB resident. Past
       * it, 503 SERVICE_UNAVAILABLE with Retry-After on the raw socket, and the connection closed.
       */
      MAX_CONNECTIONS: z.coerce.number().int().min(1).default(2_048),
      /**
       * Connections one peer address holds at once, except a proxy TRUST_PROXY trusts (the ingress
       * carries every client): twice the requests one caller may have in flight, so a client's
       * idle keep-alive connections fit beside them. Past it, 429 RATE_LIMITED with Retry-After.
       */
      MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).default(128),
      /** Record each caller's use of the contracts in the usage store (Redis with REDIS_URL, else DATA_DIR/usage); `off` only to measure its cost. */
      USAGE_RECORDING: z.enum(['on', 'off']).default('on'),
      /** The usage store's Redis keys start with this (a test stack on a shared Redis keeps its own). */
      USAGE_KEY_PREFIX: z.string().min(1).default('usage:v1'),
      /** Distinct callers recorded per day; past it, new callers count as `other`. */
      USAGE_MAX_CALLERS_PER_DAY: z.coerce.number().int().min(1).default(10_000),
      /** Bytes of request bodies the gateway holds at once, all callers together; past it, 503 with Retry-After. */
      MAX_BUFFERED_BODY_BYTES: z.coerce.number().int().min(1_048_576).default(256 * 1_048_576),
    },
    env,
  );
}

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
