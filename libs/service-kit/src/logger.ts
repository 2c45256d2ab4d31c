import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout, levels by name. Credentials are redacted wherever they appear. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    // "level":"info", not 30: what people and log pipelines filter on.
    formatters: { level: (label) => ({ level: label }) },
    redact: {
      paths: ['password', '*.password', 'passwordHash', '*.passwordHash', 'accessToken', '*.accessToken', 'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization', 'headers["x-api-key"]', 'req.headers["x-api-key"]', 'apiKey', '*.apiKey'],
      censor: '[redacted]',
    },
  });
}
