// Sends one signed webhook request to an address the guard pinned: node's http(s) client with a
// lookup that answers the pinned address (TLS still checks the certificate against the host
// name), one deadline for the whole exchange and a shorter one for the connection, redirects
// answered but never followed, and the response body read up to a small limit and then dropped.
// The status decides: once the head of the answer is in, a deadline or a cut ends the attempt with
// that status and the body read so far (a 2xx is a delivery, however slowly its body comes).
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { PinnedTarget } from './address-guard';

/** Bytes of a response body read at most; the connection is closed past them. */
export const RESPONSE_READ_LIMIT = 4096;
/** Characters of the body kept with the attempt. */
export const RESPONSE_KEEP_LIMIT = 1024;

/**
 * The part of an answer's body kept with the attempt, as a text column can hold it. The receiver
 * writes these bytes, and PostgreSQL text takes no U+0000: one NUL in an answer made the attempt's
 * write fail, so the delivery was never counted and went out again at each lease's end, for ever.
 * A NUL becomes U+FFFD, as bytes that are not UTF-8 already do; the cut at RESPONSE_KEEP_LIMIT
 * never keeps half of a surrogate pair.
 */
function keptAnswer(bytes: Buffer): string {
  const kept = bytes.subarray(0, RESPONSE_READ_LIMIT).toString('utf8').replaceAll('\u0000', '\ufffd').slice(0, RESPONSE_KEEP_LIMIT);
  return /[\ud800-\udbff]$/.test(kept) ? kept.slice(0, -1) : kept;
}

export type AttemptOutcome = 'SUCCEEDED' | 'HTTP_ERROR' | 'TIMEOUT' | 'NETWORK_ERROR' | 'FORBIDDEN_ADDRESS';

export interface AttemptResult {
  outcome: AttemptOutcome;
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  error: string | null;
}

/**
 * Cut short before the request was handed to a connection in full (no connection yet, a TLS
 * handshake unfinished, or not even started): the receiver never saw it, so it is no attempt.
 */
export interface NotSent {
  outcome: 'NOT_SENT';
  latencyMs: number;
}

export interface WebhookRequest {
  target: PinnedTarget;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** The TCP connection must be made within this (TLS and the answer then have the rest of timeoutMs). */
  connectTimeoutMs: number;
  /**
   * Aborted (the dispatcher's slow attempts are all taken): the attempt ends at once, NOT_SENT
   * when the request was not sent yet, with the answer's status once its head is in, else as a timeout.
   */
  cutShort?: AbortSignal;
}

export function sendWebhook(request: WebhookRequest): Promise<AttemptResult | NotSent> {
  const { url, address } = request.target;
  const pinnedLookup: LookupFunction = (_host, options, callback) => {
    if (options.all) (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [address]);
    else callback(null, address.address, address.family);
  };
  const client = url.protocol === 'https:' ? https : http;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);

  if (request.cutShort?.aborted) return Promise.resolve({ outcome: 'NOT_SENT', latencyMs: 0 });
  return new Promise((resolve) => {
    let settled = false;
    /** The request was handed to the connection in full: from then on the receiver has it. */
    let sent = false;
    /** Ends the attempt with the answer's status and the body read so far; set once its head is in. */
    let answered: (() => void) | undefined;
    const finish = (result: Omit<AttemptResult, 'latencyMs'> | Omit<NotSent, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(connectDeadline);
      request.cutShort?.removeEventListener('abort', cut);
      resolve({ ...result, latencyMs: elapsed() });
    };
    const outgoing = client.request(url, {
      method: 'POST',
      lookup: pinnedLookup,
      agent: false, // a fresh connection to the pinned address, never one pooled for another
      headers: { ...request.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(request.body)), 'user-agent': 'order-platform-webhooks/1' },
    });
    const deadline = setTimeout(() => {
      if (answered) answered();
      else finish({ outcome: 'TIMEOUT', statusCode: null, responseBody: null, error: `no complete answer within ${request.timeoutMs} ms` });
      outgoing.destroy();
    }, request.timeoutMs);
    const connectDeadline = setTimeout(() => {
      finish({ outcome: 'TIMEOUT', statusCode: null, responseBody: null, error: `no connection within ${request.connectTimeoutMs} ms` });
      outgoing.destroy();
    }, request.connectTimeoutMs);
    const cut = () => {
      if (answered) answered();
      else if (!sent) finish({ outcome: 'NOT_SENT' });
      else finish({ outcome: 'TIMEOUT', statusCode: null, responseBody: null, error: `cut short after ${elapsed()} ms: no answer yet while many receivers were slow` });
      outgoing.destroy();
    };
    request.cutShort?.addEventListener('abort', cut, { once: true });
    // 'finish': the whole request went to the connection (for https, after the handshake), not before.
    outgoing.on('finish', () => (sent = true));
    outgoing.on('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectDeadline);
      else socket.once('connect', () => clearTimeout(connectDeadline));
    });
    outgoing.on('error', (error) => finish({ outcome: 'NETWORK_ERROR', statusCode: null, responseBody: null, error: error.message.slice(0, 500) }));
    // A 101 goes to 'upgrade', never to 'response': no delivery, and without this the attempt
    // waited for its whole deadline and was logged as a timeout.
    outgoing.on('upgrade', (_response, socket) => {
      socket.destroy();
      finish({ outcome: 'HTTP_ERROR', statusCode: 101, responseBody: null, error: 'answered 101' });
    });
    outgoing.on('response', (response) => {
      const status = response.statusCode ?? 0;
      // Node takes any three digits for a status; outside 100..599 the answer is not HTTP (as a
      // malformed one is a network error), and the log's `statusCode` keeps its documented range.
      if (status < 100 || status > 599) {
        finish({ outcome: 'NETWORK_ERROR', statusCode: null, responseBody: null, error: `answered ${status}, which is not an HTTP status (100 to 599)` });
        response.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let read = 0;
      const done = () => {
        const body = keptAnswer(Buffer.concat(chunks));
        // 3xx included: a redirect is not followed, so it is not a delivery.
        const succeeded = status >= 200 && status < 300;
        finish({ outcome: succeeded ? 'SUCCEEDED' : 'HTTP_ERROR', statusCode: status, responseBody: body || null, error: succeeded ? null : `answered ${status}` });
        response.destroy();
      };
      answered = done;
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        read += chunk.length;
        if (read >= RESPONSE_READ_LIMIT) done();
      });
      response.on('end', done);
      response.on('error', () => done());
      response.on('close', done);
    });
    outgoing.end(request.body);
  });
}
