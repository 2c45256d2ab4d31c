import { loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';

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

const deprecations = jsonSetting(
  'ROUTE_DEPRECATIONS',
  z.array(
    z.strictObject({
      pattern: z.string().startsWith('/'),
      methods: z.array(z.string()).optional(),
      deprecation: z.iso.datetime(),
      sunset: z.iso.datetime().optional(),
      link: z.url().optional(),
    }),
  ),
);

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
      RATE_LIMIT_POINTS: z.coerce.number().int().min(1).default(100),
      RATE_LIMIT_WINDOW_S: z.coerce.number().int().min(1).default(10),
      /** Token requests per email (guessing one account's password). */
      RATE_LIMIT_TOKENS_POINTS: z.coerce.number().int().min(1).default(10),
      /** Token requests per client IP (spraying many accounts); higher, as offices share an IP. */
      RATE_LIMIT_TOKENS_IP_POINTS: z.coerce.number().int().min(1).default(100),
      RATE_LIMIT_TOKENS_WINDOW_S: z.coerce.number().int().min(1).default(60),
      /** Express `trust proxy`: hops whose X-Forwarded-For is believed (the ingress). */
      TRUST_PROXY: z.string().default('loopback'),
      /** Operator overlay on the route table: [{pattern, methods?, deprecation, sunset?, link?}]. */
      ROUTE_DEPRECATIONS: deprecations.optional(),
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
    },
    env,
  );
}

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
