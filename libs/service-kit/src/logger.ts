import pino, { type Logger } from 'pino';

export type { Logger };

/** JSON lines on stdout. Credentials are redacted wherever they appear. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['password', '*.password', 'passwordHash', '*.passwordHash', 'accessToken', '*.accessToken', 'authorization', '*.authorization', 'headers.authorization', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  });
}
