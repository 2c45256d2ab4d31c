import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

type Flushable = DestinationStream & { flush(done?: (error?: Error) => void): void };

let stdout: Flushable | undefined;

/**
 * Standard output, written once per turn of the event loop: the lines logged in one turn (the
 * request lines of every answer that left in it) go out in one write, when the turn's I/O is
 * done (setImmediate), instead of one write system call per line. Under load that is several
 * lines a write; one request at a time, one, as before. No line waits longer than the turn it was
 * logged in, and the lines still pending when the process exits (a fatal error's among them:
 * process-faults exits right after logging it) are written on its way out.
 */
function stdoutByTurn(): Flushable {
  if (stdout) return stdout;
  // Synchronous writes, as pino's default destination makes them: a line handed over is written.
  const destination = pino.destination({ dest: 1, sync: true });
  let pending: string[] = [];
  const flush = (done?: (error?: Error) => void) => {
    if (pending.length > 0) {
      const lines = pending.join('');
      pending = [];
      destination.write(lines);
    }
    done?.();
  };
  process.once('exit', () => flush());
  stdout = {
    write(line: string) {
      if (pending.push(line) === 1) setImmediate(flush);
    },
    flush,
  };
  return stdout;
}

/** JSON lines on stdout, levels by name. Credentials are redacted wherever they appear. */
export function createLogger(service: string, level = 'info'): Logger {
  return pino(
    {
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
    },
    stdoutByTurn(),
  );
}
