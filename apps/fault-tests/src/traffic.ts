// Client traffic for the fault cases: calls through the gateway that record what a client saw
// (status, error code, Retry-After, or the network error), and bounded background load.
import { gatewayUrl } from './fault-stack';

export interface Answer {
  /** 0: no HTTP answer (see `error`). */
  status: number;
  /** The error body's `code`. */
  code?: string;
  retryAfter: string | null;
  /** The `RateLimit` header. */
  rateLimit: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** The network error's code (ECONNREFUSED, ECONNRESET, …) when there was no answer. */
  error?: string;
  what: string;
  startedAt: number;
  endedAt: number;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export async function call(method: string, path: string, options: CallOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const startedAt = Date.now();
  const what = `${method} ${path.split('?')[0]}`;
  try {
    const res = await fetch(`${gatewayUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const code = res.status >= 400 && body && typeof body === 'object' ? (body as { code?: string }).code : undefined;
    return { status: res.status, code, retryAfter: res.headers.get('retry-after'), rateLimit: res.headers.get('ratelimit'), body, what, startedAt, endedAt: Date.now() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause;
    return { status: 0, error: cause?.code ?? (error as Error).name, retryAfter: null, rateLimit: null, body: undefined, what, startedAt, endedAt: Date.now() };
  }
}

/** `concurrency` clients calling back to back until stopped, `maxCalls` made or `maxMs` spent. */
export class Traffic {
  readonly answers: Answer[] = [];
  private stopped = false;
  private readonly waiters = new Set<() => void>();
  private readonly running: Promise<void>;

  constructor(options: { concurrency: number; maxCalls: number; maxMs: number; call: (index: number) => Promise<Answer> }) {
    const deadline = Date.now() + options.maxMs;
    let next = 0;
    const client = async () => {
      while (!this.stopped && next < options.maxCalls && Date.now() < deadline) {
        this.answers.push(await options.call(next++));
        for (const waiter of this.waiters) waiter();
      }
    };
    this.running = Promise.all(Array.from({ length: options.concurrency }, client)).then(() => {
      this.stopped = true;
      for (const waiter of this.waiters) waiter();
    });
  }

  /** Resolves once `count` more answers came in; fails if the traffic ends or `timeoutMs` passes first. */
  more(count: number, timeoutMs: number): Promise<void> {
    const target = this.answers.length + count;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => done(new Error(`${count} more answers did not come in ${timeoutMs} ms`)), timeoutMs);
      const done = (error?: Error) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        if (error) reject(error);
        else resolve();
      };
      const check = () => {
        if (this.answers.length >= target) done();
        else if (this.stopped) done(new Error(`the traffic ended before ${count} more answers`));
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Stops calling; resolves with every answer once the calls in flight are answered. */
  async stop(): Promise<Answer[]> {
    this.stopped = true;
    await this.running;
    return this.answers;
  }
}

/** Answers whose whole call lay between two moments. */
export function between(answers: Answer[], from: number, to: number): Answer[] {
  return answers.filter((answer) => answer.startedAt >= from && answer.endedAt <= to);
}

/** What a failed expectation should show of an answer. */
export function brief(answer: Answer): string {
  return `${answer.what} → ${answer.status || `no answer (${answer.error})`}${answer.code ? ` ${answer.code}` : ''}${answer.retryAfter ? ` Retry-After: ${answer.retryAfter}` : ''}`;
}

/** Counts answers by status (and error), for the test output. */
export function tally(answers: Answer[]): string {
  const counts = new Map<string, number>();
  for (const answer of answers) {
    const key = answer.status ? `${answer.status}${answer.code ? ` ${answer.code}` : ''}` : `no answer (${answer.error})`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${count}× ${key}`).join(', ') || 'none';
}
