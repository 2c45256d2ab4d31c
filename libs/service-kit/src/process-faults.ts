// What a process does with an error nobody caught. An operational fault (a socket reset, a
// stream cut short, a client error thrown where no handler saw it) belongs to one request or
// one connection: it is logged, the request it belongs to is ended in the error format, and the
// process serves on. Anything else is a programmer error: the process state can no longer be
// trusted, so it is logged and the process exits for its supervisor to restart it.
import { ApiError, DomainError, sendError } from '@platform/errors';
import type { Logger } from 'pino';
import { currentContext } from './request-context';

/** Error codes of faults on one socket or stream, not of a broken program. */
const OPERATIONAL_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_STREAM_DESTROYED',
  'ERR_SOCKET_CLOSED',
  'ERR_HTTP_REQUEST_TIMEOUT',
]);

export function isOperationalFault(error: unknown): boolean {
  if (error instanceof ApiError || error instanceof DomainError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (OPERATIONAL_CODES.has(code) || code.startsWith('HPE_'));
}

/** Handles one uncaught fault; `exit` ends the process (injectable for tests). */
export function createFaultHandler(logger: Logger, exit: (code: number) => void): (error: unknown, origin: string) => void {
  return (error, origin) => {
    const context = currentContext();
    if (!isOperationalFault(error)) {
      logger.fatal({ err: error, origin, traceId: context?.traceId }, 'programmer error: exiting');
      exit(1);
      return;
    }
    logger.warn({ err: error, origin, traceId: context?.traceId }, 'operational fault: the request it belongs to is ended');
    const response = context?.response;
    // A response already finished belongs to a request long gone (its context can outlive it on a pooled socket).
    if (!response || response.writableEnded) return;
    try {
      if (response.headersSent) response.destroy();
      else sendError(response.req, response, error);
    } catch {
      response.destroy();
    }
  };
}

/** Installs the handler for uncaught exceptions and unhandled rejections of this process. */
export function handleProcessFaults(logger: Logger): void {
  const handle = createFaultHandler(logger, (code) => process.exit(code));
  process.on('uncaughtException', (error, origin) => handle(error, origin));
  process.on('unhandledRejection', (reason) => handle(reason, 'unhandledRejection'));
}
