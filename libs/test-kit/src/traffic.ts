// Client traffic for the stack suites (fault-tests, cluster-tests): calls that record what a client
// saw (status, error code, Retry-After and RateLimit, or the network error when there was no
// answer; behind HAProxy also which replicas served it, from its X-Served-By), and bounded
// background load.

export interface Answer {
  /** 0: no HTTP answer (see `error`). */
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  headers: Headers;
  /** The error body's `code`. */
  code?: string;
  retryAfter: string | null;
  /** The `RateLimit` header. */
  rateLimit: string | null;
  /** The network error's code (ECONNREFUSED, ECONNRESET, …) when there was no answer. */
  error?: string;
  /** Behind the cluster's HAProxy: the gateway replica that answered, e.g. `gateway-1`. */
  gateway?: string;
  /** Behind the cluster's HAProxy: the service replica behind it, for REST calls, e.g. `orders-2`. */
  service?: string;
  what: string;
  startedAt: number;
  endedAt: number;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** The recording door's bound on a call (15 s unless given). */
  timeoutMs?: number;
}

export type Door = (method: string, path: string, options?: CallOptions) => Promise<Answer>;

/** Calls to `baseUrl` (a gateway, or the cluster's HAProxy) that never throw: a network failure is an answer with status 0. */
export function door(baseUrl: string): Door {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const startedAt = Date.now();
    const what = `${method} ${path.split('?')[0]}`;
    try {
      const res = await fetch(`${baseUrl}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), signal: AbortSignal.timeout(options.timeoutMs ?? 15_000) });
      const text = await res.text();
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      // HAProxy's X-Served-By, e.g. "orders-2, gateway-1": the service's replica first, then the gateway's.
      const servedBy = (res.headers.get('x-served-by') ?? '').split(',').map((name) => name.trim());
      const code = res.status >= 400 && body && typeof body === 'object' ? (body as { code?: string }).code : undefined;
      return {
        status: res.status,
        body,
        headers: res.headers,
        code,
        retryAfter: res.headers.get('retry-after'),
        rateLimit: res.headers.get('ratelimit'),
        gateway: servedBy.find((name) => name.startsWith('gateway-')),
        service: servedBy.find((name) => name && !name.startsWith('gateway-')),
        what,
        startedAt,
        endedAt: Date.now(),
      };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      return { status: 0, error: cause?.code ?? (error as Error).name, body: undefined, headers: new Headers(), retryAfter: null, rateLimit: null, what, startedAt, endedAt: Date.now() };
    }
  };
}

/** What a failed expectation should show of an answer. */
export function brief(answer: Answer): string {
  const by = [answer.service, answer.gateway].filter(Boolean).join(' via ');
  const message = answer.status >= 500 && typeof answer.body?.message === 'string' ? `: ${answer.body.message}` : '';
  return `${answer.what} → ${answer.status || `no answer (${answer.error})`}${answer.code ? ` ${answer.code}` : ''}${answer.retryAfter ? ` Retry-After: ${answer.retryAfter}` : ''}${by ? ` (${by})` : ''}${message}`;
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
