import { loadConfig, portSetting } from '@platform/service-kit';
import { z } from '@platform/validation';

const deprecations = z
  .string()
  .transform((text, context) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      context.addIssue({ code: 'custom', message: 'ROUTE_DEPRECATIONS must be JSON' });
      return z.NEVER;
    }
  })
  .pipe(
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

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      PORT: portSetting(8080),
      METRICS_PORT: portSetting(9464),
      USERS_URL: z.url().default('http://127.0.0.1:3001'),
      ORDERS_URL: z.url().default('http://127.0.0.1:3002'),
      CATALOG_URL: z.url().default('http://127.0.0.1:3003'),
      /** Unset: rate limits are kept in this process's memory (one replica only). */
      REDIS_URL: z.string().optional(),
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
    },
    env,
  );
}

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;
