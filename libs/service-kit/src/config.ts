// The one config loader: environment variables parsed and checked once at start, with defaults
// that make `npm start` work on a bare machine. A bad value stops the process with every
// problem listed.
import path from 'node:path';
import { z } from '@platform/validation';
import { createLogger } from './logger';

export const DEVELOPMENT_JWT_SECRET = 'development-only-secret-change-me-0123456789';

const port = (fallback: number) => z.coerce.number().int().min(1).max(65535).default(fallback);

export const baseConfigShape = {
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Unset: each service keeps an embedded PostgreSQL (PGlite) under DATA_DIR/<service>. */
  DATABASE_URL: z.string().url().optional(),
  DATA_DIR: z.string().default(path.resolve(process.cwd(), '.data')),
  JWT_SECRET: z.string().min(32, 'JWT_SECRET must be at least 32 characters').optional(),
  /** During a key rotation: the previous secret, still accepted for verification (never for signing). */
  JWT_PREVIOUS_SECRET: z.string().min(32, 'JWT_PREVIOUS_SECRET must be at least 32 characters').optional(),
  /** Signs list cursors; defaults to a key derived from JWT_SECRET. */
  CURSOR_SECRET: z.string().min(16).optional(),
  /** How long readiness reports "stopping" before the listener closes (load balancers catch up). */
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).default(0),
  /** Longest wait for in-flight requests after the listener closes. */
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * The address the app's ports listen on: every interface (0.0.0.0), as a container needs to be
   * reached at its pod address; the one-machine cluster sets 127.0.0.1, so that HAProxy, on
   * loopback, is the only way in.
   */
  LISTEN_HOST: z.union([z.ipv4(), z.ipv6()], { error: 'LISTEN_HOST must be an IP address to listen on (0.0.0.0, 127.0.0.1, ::)' }).default('0.0.0.0'),
  /** Request budget when the caller sends no X-Request-Timeout-Ms. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
};

export type BaseConfig = z.output<z.ZodObject<typeof baseConfigShape>>;

export { port as portSetting };

/**
 * DEMO_DATA, for a service with demo data (the catalog's 24 products, their stock): whether it is
 * seeded into an empty database at start. Unset: yes, except with NODE_ENV=production, where a
 * first rollout must not start selling demo products.
 */
export const demoDataSetting = z
  .enum(['true', 'false'])
  .optional()
  .transform((value) => (value === undefined ? undefined : value === 'true'));

export const seedsDemoData = (config: { DEMO_DATA?: boolean; NODE_ENV: string }): boolean => config.DEMO_DATA ?? config.NODE_ENV !== 'production';

export interface LoadedConfig {
  jwtSecret: string;
  /** The current secret first, then the previous one during a rotation. */
  jwtVerifySecrets: string[];
  cursorSecret: string;
  /** Set when a development default stands in for a secret: print it loudly. */
  warnings: string[];
}

/** A configuration the process cannot run with: every bad variable and what is wrong with it. */
export class ConfigError extends Error {
  constructor(readonly problems: { variable: string; problem: string }[]) {
    super(`Invalid configuration:\n${problems.map(({ variable, problem }) => `  ${variable}: ${problem}`).join('\n')}`);
  }
}

/**
 * Loads the configuration, or logs one JSON line naming every bad variable and exits with 1.
 * No stack trace: the fault is in the environment an operator set, not in the code.
 */
export function configOrExit<T>(service: string, load: () => T): T {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    createLogger(service).fatal({ problems: error.problems }, 'invalid configuration: the process cannot start');
    process.exit(1);
  }
}

/** Parses process.env against the base settings plus the app's own; throws ConfigError listing every problem. */
export function loadConfig<S extends z.ZodRawShape>(shape: S, env: NodeJS.ProcessEnv = process.env): z.output<z.ZodObject<typeof baseConfigShape & S>> & LoadedConfig {
  const schema = z.object({ ...baseConfigShape, ...shape });
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => ({ variable: issue.path.join('.'), problem: issue.message })));
  }
  const config = result.data as z.output<z.ZodObject<typeof baseConfigShape & S>>;
  const base = config as unknown as BaseConfig;
  const warnings: string[] = [];
  if (!base.JWT_SECRET) {
    if (base.NODE_ENV === 'production') throw new ConfigError([{ variable: 'JWT_SECRET', problem: 'required when NODE_ENV=production' }]);
    warnings.push('JWT_SECRET is not set: using the PUBLIC DEVELOPMENT SECRET. Anyone can mint tokens. Never run like this in production.');
  }
  const jwtSecret = base.JWT_SECRET ?? DEVELOPMENT_JWT_SECRET;
  const jwtVerifySecrets = base.JWT_PREVIOUS_SECRET ? [jwtSecret, base.JWT_PREVIOUS_SECRET] : [jwtSecret];
  // Cursors are signed with a key derived from JWT_SECRET unless CURSOR_SECRET is set; set it
  // explicitly so that rotating JWT_SECRET does not invalidate cursors clients hold.
  return { ...config, jwtSecret, jwtVerifySecrets, cursorSecret: base.CURSOR_SECRET ?? `cursor:${jwtSecret}`, warnings };
}
