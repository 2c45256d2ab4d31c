// The usage store: which caller used which contract element (REST operation, parameter and field;
// GraphQL field and argument; RPC and message field), per day. Shared by every replica and kept
// across restarts: Redis when REDIS_URL is set, otherwise one file per day under DATA_DIR/usage
// (the embedded default, where every process shares one DATA_DIR). Recording is a map update in
// memory; a flush about once a second adds the counts to the store. The deprecation reports
// (GET /v1/deprecations, npm run contract:usage) and the contract gate's usage export read it.
import { appendFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Counter, Gauge, type Registry } from 'prom-client';

/** Who used an element, as caller-identity.ts names them. Values are bounded and contain no tab or newline. */
export interface CallerIdentity {
  /** `key:<id>`, `user:<id>`, `service:<name>`, `client:<name>/<version>`, or `unidentified`. */
  caller: string;
  /** The client's name/version (X-Client-Name/-Version or User-Agent), or `unknown`. */
  client: string;
  /** Whose key it is (`user:<id>`), when the caller is a key. */
  owner?: string;
}

/** One day's use of one element by one caller and client. */
export interface UsageRow extends CallerIdentity {
  /** YYYY-MM-DD, UTC. */
  day: string;
  element: string;
  calls: number;
  /** ISO time of the last call. */
  lastUsed: string;
}

/** Days kept; older days are deleted (files) or expire (Redis). */
export const RETENTION_DAYS = 90;
/** Distinct callers recorded per day; past it, a new caller counts as `other`. */
export const DEFAULT_MAX_CALLERS_PER_DAY = 10_000;
export const OVERFLOW_CALLER = 'other';
/**
 * Distinct clients (name/version) recorded per caller and day, per process; past it, the caller's
 * new clients count as `other`. The caller cap alone did not bound the store: one signed-in caller
 * sending a fresh X-Client-Version on every request added a row per element per request.
 */
export const DEFAULT_MAX_CLIENTS_PER_CALLER = 20;
/**
 * Self-named callers (`client:<name>/<version>`: no token, no key, only headers anyone can invent)
 * admitted per day and process; past it they count as `other` without spending the day's shared
 * caller cap, which anonymous requests with made-up names could otherwise fill by themselves and
 * so turn every signed-in caller new that day into `other`.
 */
export const DEFAULT_MAX_SELF_NAMED_CALLERS_PER_DAY = 1_000;

const DAY_MS = 86_400_000;
export const dayOf = (time: number): string => new Date(time).toISOString().slice(0, 10);
export const daysBefore = (day: string, days: number): string => dayOf(Date.parse(`${day}T00:00:00Z`) - days * DAY_MS);

/** A row's identity inside a day: element, caller, client, owner. */
const SEPARATOR = '\t';
const rowKey = (row: { element: string } & CallerIdentity) => [row.element, row.caller, row.client, row.owner ?? ''].join(SEPARATOR);
function fromRowKey(key: string): { element: string } & CallerIdentity {
  const [element, caller, client, owner] = key.split(SEPARATOR);
  return { element, caller, client, ...(owner ? { owner } : {}) };
}

/** Where the counts live; both kinds add (never overwrite) so that every replica's flushes sum. */
export interface UsageStore {
  /** Adds a batch of counts (one day each row). */
  add(rows: UsageRow[]): Promise<void>;
  /** Of `callers` (new to this process today), those still under the day's cap; each admitted one is remembered. */
  admitCallers(day: string, callers: string[], cap: number): Promise<Set<string>>;
  /** Every row from `fromDay` to `toDay` (inclusive), summed over replicas. */
  read(fromDay: string, toDay: string): Promise<UsageRow[]>;
  /** The first day this store recorded anything (it has complete days from the next one; the gate uses it). */
  recordedSince(): Promise<string | undefined>;
  close(): Promise<void>;
}

function daysBetween(fromDay: string, toDay: string): string[] {
  const days: string[] = [];
  for (let time = Date.parse(`${fromDay}T00:00:00Z`); time <= Date.parse(`${toDay}T00:00:00Z`); time += DAY_MS) days.push(dayOf(time));
  return days;
}

/** Redis: per day a hash of counts, a hash of last-use times and a set of callers, each expiring after the retention. */
export class RedisUsageStore implements UsageStore {
  private readonly ttlSeconds = (RETENTION_DAYS + 1) * 86_400;

  /** `prefix` keeps tests on a shared Redis apart. */
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'usage:v1',
  ) {}

  static connect(url: string, prefix = 'usage:v1'): RedisUsageStore {
    // Its own connection: a flush is a batch of commands that may take longer than a rate-limit check.
    const redis = new Redis(url, { maxRetriesPerRequest: 1, connectTimeout: 1_000, commandTimeout: 2_000, retryStrategy: (attempt) => Math.min(attempt * 200, 2_000) });
    redis.on('error', () => undefined); // a flush that fails is counted and retried by the recorder
    return new RedisUsageStore(redis, prefix);
  }

  async add(rows: UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    const pipeline = this.redis.pipeline();
    const days = new Set<string>();
    for (const row of rows) {
      const key = rowKey(row);
      pipeline.hincrby(`${this.prefix}:${row.day}:calls`, key, row.calls);
      // Flushes of one replica come in time order; of several, the last writer is within a second of the truth.
      pipeline.hset(`${this.prefix}:${row.day}:last`, key, row.lastUsed);
      days.add(row.day);
    }
    for (const day of days) for (const kind of ['calls', 'last']) pipeline.expire(`${this.prefix}:${day}:${kind}`, this.ttlSeconds);
    pipeline.set(`${this.prefix}:since`, [...days].sort()[0], 'NX');
    const results = await pipeline.exec();
    const failed = results?.find(([error]) => error);
    if (failed) throw failed[0];
  }

  async admitCallers(day: string, callers: string[], cap: number): Promise<Set<string>> {
    const key = `${this.prefix}:${day}:callers`;
    const [count, known] = await Promise.all([this.redis.scard(key), callers.length ? this.redis.smismember(key, ...callers) : Promise.resolve([] as number[])]);
    const admitted = new Set<string>();
    let room = cap - count;
    const added: string[] = [];
    callers.forEach((caller, index) => {
      if (known[index] === 1) admitted.add(caller);
      else if (room > 0) {
        room--;
        admitted.add(caller);
        added.push(caller);
      }
    });
    // Replicas admitting at the same moment may pass the cap by their batches: a bound, not an exact count.
    if (added.length) await this.redis.pipeline().sadd(key, ...added).expire(key, this.ttlSeconds).exec();
    return admitted;
  }

  async read(fromDay: string, toDay: string): Promise<UsageRow[]> {
    const rows: UsageRow[] = [];
    for (const day of daysBetween(fromDay, toDay)) {
      const [calls, last] = await Promise.all([this.redis.hgetall(`${this.prefix}:${day}:calls`), this.redis.hgetall(`${this.prefix}:${day}:last`)]);
      for (const [key, count] of Object.entries(calls)) rows.push({ day, ...fromRowKey(key), calls: Number(count), lastUsed: last[key] ?? `${day}T00:00:00.000Z` });
    }
    return rows;
  }

  async recordedSince(): Promise<string | undefined> {
    return (await this.redis.get(`${this.prefix}:since`)) ?? undefined;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}

/**
 * Files: DATA_DIR/usage/<day>.jsonl, one line per row per flush, appended in one write (the
 * embedded default's processes share the folder: appends of one write do not interleave).
 * Reading sums the lines. Files older than the retention are deleted as days go by.
 */
export class FileUsageStore implements UsageStore {
  private readonly callersByDay = new Map<string, Set<string>>();
  private lastPruned = '';

  constructor(private readonly dir: string) {}

  private fileOf(day: string): string {
    return path.join(this.dir, `${day}.jsonl`);
  }

  async add(rows: UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    await mkdir(this.dir, { recursive: true });
    const byDay = new Map<string, string[]>();
    for (const row of rows) {
      const line = JSON.stringify({ e: row.element, c: row.caller, k: row.client, ...(row.owner ? { o: row.owner } : {}), n: row.calls, t: row.lastUsed });
      const lines = byDay.get(row.day);
      if (lines) lines.push(line);
      else byDay.set(row.day, [line]);
    }
    for (const [day, lines] of byDay) await appendFile(this.fileOf(day), `${lines.join('\n')}\n`);
    const since = path.join(this.dir, 'since');
    await writeFile(since, [...byDay.keys()].sort()[0], { flag: 'wx' }).catch(() => undefined);
    await this.prune([...byDay.keys()].sort().pop() as string);
  }

  private async prune(today: string): Promise<void> {
    if (today === this.lastPruned) return;
    this.lastPruned = today;
    const oldest = daysBefore(today, RETENTION_DAYS);
    for (const name of await readdir(this.dir)) {
      const day = /^(\d{4}-\d{2}-\d{2})\.jsonl$/.exec(name)?.[1];
      if (day && day < oldest) await rm(path.join(this.dir, name), { force: true });
    }
  }

  async admitCallers(day: string, callers: string[], cap: number): Promise<Set<string>> {
    let known = this.callersByDay.get(day);
    if (!known) {
      // The callers already in today's file (other processes, or this one before a restart).
      known = new Set((await this.readDay(day)).map((row) => row.caller).filter((caller) => caller !== OVERFLOW_CALLER));
      this.callersByDay.clear();
      this.callersByDay.set(day, known);
    }
    const admitted = new Set<string>();
    for (const caller of callers) {
      if (known.has(caller)) admitted.add(caller);
      else if (known.size < cap) {
        known.add(caller);
        admitted.add(caller);
      }
    }
    return admitted;
  }

  private async readDay(day: string): Promise<UsageRow[]> {
    let text: string;
    try {
      text = await readFile(this.fileOf(day), 'utf8');
    } catch {
      return [];
    }
    const sums = new Map<string, UsageRow>();
    for (const line of text.split('\n')) {
      if (!line) continue;
      let entry: { e: string; c: string; k: string; o?: string; n: number; t: string };
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // a line cut by a crash mid-write: the rest of the file still counts
      }
      const identity = { element: entry.e, caller: entry.c, client: entry.k, ...(entry.o ? { owner: entry.o } : {}) };
      const key = rowKey(identity);
      const sum = sums.get(key);
      if (sum) {
        sum.calls += entry.n;
        if (entry.t > sum.lastUsed) sum.lastUsed = entry.t;
      } else sums.set(key, { day, ...identity, calls: entry.n, lastUsed: entry.t });
    }
    return [...sums.values()];
  }

  async read(fromDay: string, toDay: string): Promise<UsageRow[]> {
    const rows: UsageRow[] = [];
    // One push per row: spreading a day's rows into push() overflows the stack past about 120,000.
    for (const day of daysBetween(fromDay, toDay)) for (const row of await this.readDay(day)) rows.push(row);
    return rows;
  }

  async recordedSince(): Promise<string | undefined> {
    try {
      return (await readFile(path.join(this.dir, 'since'), 'utf8')).trim() || undefined;
    } catch {
      return undefined;
    }
  }

  async close(): Promise<void> {
    // Nothing held open: every write opens and closes its file.
  }
}

/** The shared store: Redis when a URL is given, else files under `dataDir/usage`. */
export function openUsageStore(options: { redisUrl?: string; dataDir: string; keyPrefix?: string }): UsageStore {
  return options.redisUrl ? RedisUsageStore.connect(options.redisUrl, options.keyPrefix) : new FileUsageStore(path.join(options.dataDir, 'usage'));
}

export type ContractKind = 'rest' | 'graphql' | 'proto';
const CONTRACT_KINDS: ContractKind[] = ['rest', 'graphql', 'proto'];

export interface RecorderOptions {
  /** How often the counts go to the store. */
  flushMs?: number;
  maxCallersPerDay?: number;
  /** Self-named (`client:`) callers per day and process (DEFAULT_MAX_SELF_NAMED_CALLERS_PER_DAY). */
  maxSelfNamedCallersPerDay?: number;
  /** Distinct clients per caller and day (DEFAULT_MAX_CLIENTS_PER_CALLER). */
  maxClientsPerCaller?: number;
  /** Rows held while the store does not answer; past it, new rows are dropped (and counted). */
  maxPendingRows?: number;
  /** Where the recorder's own metrics go: bounded labels only (see USAGE_METRIC_SERIES). */
  registry?: Registry;
  now?: () => number;
  onError?: (error: unknown) => void;
}

/**
 * The recorder's Prometheus series, whatever the number of callers: usage_recorded_total per
 * contract kind (3), usage_callers_over_cap_total, usage_rows_dropped_total,
 * usage_flush_failures_total and usage_pending_rows (1 each). Callers and elements are never labels.
 */
export const USAGE_METRIC_SERIES = 7;

interface Pending {
  identity: CallerIdentity;
  element: string;
  day: string;
  calls: number;
  last: number;
}

/** Aggregates in memory, flushes to the store about once a second; `record` never waits on the store. */
export class UsageRecorder {
  private pending = new Map<string, Pending>();
  private readonly admittedToday = new Map<string, Set<string>>();
  /** Today's clients of each admitted caller (at most maxClientsPerCaller each). */
  private readonly clientsToday = new Map<string, Map<string, Set<string>>>();
  private readonly maxClients: number;
  /** Today's self-named callers sent to the store for admission (at most maxSelfNamed). */
  private readonly selfNamedToday = new Map<string, Set<string>>();
  private readonly maxSelfNamed: number;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly maxCallers: number;
  private readonly maxPending: number;
  private readonly now: () => number;
  private readonly metrics: { recorded: Counter<'contract'>; overCap: Counter; dropped: Counter; failures: Counter };

  constructor(
    readonly store: UsageStore,
    private readonly options: RecorderOptions = {},
  ) {
    this.maxCallers = options.maxCallersPerDay ?? DEFAULT_MAX_CALLERS_PER_DAY;
    this.maxClients = options.maxClientsPerCaller ?? DEFAULT_MAX_CLIENTS_PER_CALLER;
    this.maxSelfNamed = options.maxSelfNamedCallersPerDay ?? DEFAULT_MAX_SELF_NAMED_CALLERS_PER_DAY;
    this.maxPending = options.maxPendingRows ?? 100_000;
    this.now = options.now ?? Date.now;
    const registers = options.registry ? [options.registry] : [];
    this.metrics = {
      recorded: new Counter({ name: 'usage_recorded_total', help: 'Contract elements recorded as used, by contract kind', labelNames: ['contract'], registers }),
      overCap: new Counter({ name: 'usage_callers_over_cap_total', help: 'Uses counted as caller `other`: the day already had the maximum of distinct callers', registers }),
      dropped: new Counter({ name: 'usage_rows_dropped_total', help: 'Usage rows dropped: the store did not answer and the pending rows reached their bound', registers }),
      failures: new Counter({ name: 'usage_flush_failures_total', help: 'Flushes of usage counts the store refused (retried at the next flush)', registers }),
    };
    for (const contract of CONTRACT_KINDS) this.metrics.recorded.inc({ contract }, 0);
    const pendingRows = () => this.pending.size;
    new Gauge({
      name: 'usage_pending_rows',
      help: 'Usage rows waiting for the next flush',
      registers,
      collect() {
        this.set(pendingRows());
      },
    });
  }

  /** Starts the periodic flush (unref'd: it never keeps a process alive). */
  start(): this {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushMs ?? 1_000).unref();
    return this;
  }

  /** Counts one use of each element by the caller; cheap and synchronous. */
  record(identity: CallerIdentity, elements: readonly string[]): void {
    if (elements.length === 0) return;
    const time = this.now();
    const day = dayOf(time);
    const prefix = `${day}${SEPARATOR}${identity.caller}${SEPARATOR}${identity.client}${SEPARATOR}${identity.owner ?? ''}${SEPARATOR}`;
    for (const element of elements) {
      const key = prefix + element;
      const entry = this.pending.get(key);
      if (entry) {
        entry.calls++;
        entry.last = time;
      } else if (this.pending.size < this.maxPending) {
        this.pending.set(key, { identity, element, day, calls: 1, last: time });
      } else {
        this.metrics.dropped.inc();
        continue;
      }
    }
    const kind = elements[0].slice(0, elements[0].indexOf(':')) as ContractKind;
    if (CONTRACT_KINDS.includes(kind)) this.metrics.recorded.inc({ contract: kind }, elements.length);
  }

  /** Adds what was recorded to the store; on failure the counts stay pending for the next flush. */
  async flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.write(batch)
      .catch((error: unknown) => {
        this.metrics.failures.inc();
        this.options.onError?.(error);
        // Back into the pending map, merged with what came meanwhile, within the bound.
        for (const [key, entry] of batch) {
          const current = this.pending.get(key);
          if (current) {
            current.calls += entry.calls;
            current.last = Math.max(current.last, entry.last);
          } else if (this.pending.size < this.maxPending) this.pending.set(key, entry);
          else this.metrics.dropped.inc();
        }
      })
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private async write(batch: Map<string, Pending>): Promise<void> {
    // Callers this process has not seen today: the store says which fit under the day's cap.
    const newByDay = new Map<string, Set<string>>();
    const refused = new Set<string>();
    for (const { day, identity } of batch.values()) {
      if (identity.caller === OVERFLOW_CALLER || this.admittedToday.get(day)?.has(identity.caller)) continue;
      if (identity.caller.startsWith('client:') && !this.admitSelfNamed(day, identity.caller)) {
        refused.add(`${day}${SEPARATOR}${identity.caller}`);
        continue;
      }
      newByDay.set(day, (newByDay.get(day) ?? new Set()).add(identity.caller));
    }
    for (const [day, callers] of newByDay) {
      const admitted = await this.store.admitCallers(day, [...callers], this.maxCallers);
      if (!this.admittedToday.has(day)) {
        // Only the current day's callers are kept in memory.
        for (const old of this.admittedToday.keys()) if (old < day) this.admittedToday.delete(old);
        this.admittedToday.set(day, new Set());
      }
      const known = this.admittedToday.get(day) as Set<string>;
      for (const caller of callers) {
        if (admitted.has(caller)) known.add(caller);
        else refused.add(`${day}${SEPARATOR}${caller}`);
      }
    }
    const rows = new Map<string, UsageRow>();
    for (const entry of batch.values()) {
      const over = refused.has(`${entry.day}${SEPARATOR}${entry.identity.caller}`);
      if (over) this.metrics.overCap.inc(entry.calls);
      const identity: CallerIdentity = over ? { caller: OVERFLOW_CALLER, client: OVERFLOW_CALLER } : this.withBoundedClient(entry.day, entry.identity);
      const key = `${entry.day}${SEPARATOR}${rowKey({ element: entry.element, ...identity })}`;
      const row = rows.get(key);
      const lastUsed = new Date(entry.last).toISOString();
      if (row) {
        row.calls += entry.calls;
        if (lastUsed > row.lastUsed) row.lastUsed = lastUsed;
      } else rows.set(key, { day: entry.day, element: entry.element, ...identity, calls: entry.calls, lastUsed });
    }
    await this.store.add([...rows.values()]);
  }

  /** Whether a self-named caller may ask the store for a place today (this process's bound). */
  private admitSelfNamed(day: string, caller: string): boolean {
    let seen = this.selfNamedToday.get(day);
    if (!seen) {
      for (const old of this.selfNamedToday.keys()) if (old < day) this.selfNamedToday.delete(old);
      seen = new Set();
      this.selfNamedToday.set(day, seen);
    }
    if (seen.has(caller)) return true;
    if (seen.size >= this.maxSelfNamed) return false;
    seen.add(caller);
    return true;
  }

  /** The identity with its client, or `other` once the caller has used maxClients others today. */
  private withBoundedClient(day: string, identity: CallerIdentity): CallerIdentity {
    if (identity.client === OVERFLOW_CALLER) return identity;
    let byCaller = this.clientsToday.get(day);
    if (!byCaller) {
      for (const old of this.clientsToday.keys()) if (old < day) this.clientsToday.delete(old);
      byCaller = new Map();
      this.clientsToday.set(day, byCaller);
    }
    let clients = byCaller.get(identity.caller);
    if (!clients) byCaller.set(identity.caller, (clients = new Set()));
    if (clients.has(identity.client)) return identity;
    if (clients.size >= this.maxClients) return { ...identity, client: OVERFLOW_CALLER };
    clients.add(identity.client);
    return identity;
  }

  /** Flushes what is left and stops the timer (graceful shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flushing;
    await this.flush();
  }
}

/** One caller's use of one element: calls in the last 1, 7 and 30 days and the last time. */
export interface CallerUse extends CallerIdentity {
  element: string;
  calls1d: number;
  calls7d: number;
  calls30d: number;
  lastUsed: string;
}

/** Newest use first, then by element. */
const newestFirst = (uses: Iterable<CallerUse>): CallerUse[] => [...uses].sort((a, b) => b.lastUsed.localeCompare(a.lastUsed) || a.element.localeCompare(b.element));

/**
 * Each (element, caller, client) used in the last 30 days up to `today`, for the elements
 * `wanted` accepts; newest use first. "Last 1 day" is today (UTC), 7 days today and the 6 before.
 * `days`: read only these days of the 30 (their counts still measured from `today`).
 */
export async function usageByCaller(store: UsageStore, options: { today: string; wanted: (element: string) => boolean; caller?: string; days?: { from: string; to: string } }): Promise<CallerUse[]> {
  const rows = await store.read(options.days?.from ?? daysBefore(options.today, 29), options.days?.to ?? options.today);
  const from7 = daysBefore(options.today, 6);
  const uses = new Map<string, CallerUse>();
  for (const row of rows) {
    if (!options.wanted(row.element) || (options.caller && row.caller !== options.caller)) continue;
    const key = rowKey(row);
    const use = uses.get(key) ?? { element: row.element, caller: row.caller, client: row.client, ...(row.owner ? { owner: row.owner } : {}), calls1d: 0, calls7d: 0, calls30d: 0, lastUsed: row.lastUsed };
    use.calls30d += row.calls;
    if (row.day >= from7) use.calls7d += row.calls;
    if (row.day === options.today) use.calls1d += row.calls;
    if (row.lastUsed > use.lastUsed) use.lastUsed = row.lastUsed;
    uses.set(key, use);
  }
  return newestFirst(uses.values());
}

/** The uses of two spans of days as one: counts added, the later last use kept. */
function combinedUses(older: CallerUse[], newer: CallerUse[]): CallerUse[] {
  const uses = new Map<string, CallerUse>(older.map((use) => [rowKey(use), { ...use }]));
  for (const use of newer) {
    const sum = uses.get(rowKey(use));
    if (!sum) uses.set(rowKey(use), use);
    else {
      sum.calls1d += use.calls1d;
      sum.calls7d += use.calls7d;
      sum.calls30d += use.calls30d;
      if (use.lastUsed > sum.lastUsed) sum.lastUsed = use.lastUsed;
    }
  }
  return newestFirst(uses.values());
}

/**
 * usageByCaller for reports any caller may ask for (GET /v1/me/deprecations), at the cost of two
 * days read, not thirty. The days before yesterday no longer change (every replica flushes within
 * seconds of a call), so their sums are made once per day and kept, by caller; each report reads
 * yesterday and today and adds them. A caller's own report then combines its own uses only, so its
 * cost does not grow with everyone's. Reports asked at the same moment share their reads. A
 * recorder that could not write for more than a day adds its counts to a kept day: they appear
 * the next day.
 */
export class UsageReports {
  /** The kept sums, by the caller accountable for them (a key's owner, else the caller): of the days from 29 to 2 days before `today`, for the elements of `elements`. */
  private settled?: { today: string; elements: string; byCaller: Promise<Map<string, CallerUse[]>> };
  private readonly recentReads = new Map<string, Promise<CallerUse[]>>();

  constructor(private readonly store: UsageStore) {}

  /**
   * Each use of what `wanted` accepts, newest first; when `caller` is given, only its own uses and
   * those of the keys it owns (a use whose `owner` is `caller`). `elements` names
   * what `wanted` accepts (the registry's elements): kept sums are of one `elements` at a time.
   */
  async usage(options: { today: string; wanted: (element: string) => boolean; elements: string; caller?: string }): Promise<CallerUse[]> {
    const { today, wanted, elements, caller } = options;
    let settled = this.settled;
    if (settled?.today !== today || settled.elements !== elements) {
      const byCaller = usageByCaller(this.store, { today, wanted, days: { from: daysBefore(today, 29), to: daysBefore(today, 2) } }).then((uses) => {
        const grouped = new Map<string, CallerUse[]>();
        for (const use of uses) {
          const ofCaller = grouped.get(accountableFor(use));
          if (ofCaller) ofCaller.push(use);
          else grouped.set(accountableFor(use), [use]);
        }
        return grouped;
      });
      const kept = (settled = this.settled = { today, elements, byCaller });
      // A failed read is not kept: the next report tries again.
      byCaller.catch(() => this.settled === kept && (this.settled = undefined));
    }
    const key = `${today}\n${elements}`;
    let recent = this.recentReads.get(key);
    if (!recent) {
      recent = usageByCaller(this.store, { today, wanted, days: { from: daysBefore(today, 1), to: today } }).finally(() => this.recentReads.delete(key));
      this.recentReads.set(key, recent);
    }
    const [byCaller, newer] = await Promise.all([settled.byCaller, recent]);
    if (caller === undefined) return combinedUses([...byCaller.values()].flat(), newer);
    return combinedUses(byCaller.get(caller) ?? [], newer.filter((use) => accountableFor(use) === caller));
  }
}

/**
 * Whose report a use belongs in: an issued key's uses are its owner's (`user:<id>`), who manages the
 * key and is the one told of its deprecated calls (a key cannot read the report itself); any other
 * use is its caller's.
 */
const accountableFor = (use: CallerUse): string => use.owner ?? use.caller;

/** The usage export the contract gate reads (tools/contracts/gate.ts `UsageExport`). */
export interface UsageExport {
  generatedAt: string;
  recordedSince: string;
  elements: Record<string, { lastUsed: string; callers: { caller: string; lastUsed: string; calls: number }[] }>;
}

/** Every element used within the retention, with its callers (a caller is `caller` plus ` (client)`). */
export async function exportUsage(store: UsageStore, now: number = Date.now()): Promise<UsageExport> {
  const today = dayOf(now);
  const rows = await store.read(daysBefore(today, RETENTION_DAYS - 1), today);
  const elements: UsageExport['elements'] = {};
  for (const row of rows) {
    const entry = (elements[row.element] ??= { lastUsed: row.lastUsed, callers: [] });
    if (row.lastUsed > entry.lastUsed) entry.lastUsed = row.lastUsed;
    const name = `${row.caller} (${row.client}${row.owner ? `, owner ${row.owner}` : ''})`;
    const caller = entry.callers.find((item) => item.caller === name);
    if (caller) {
      caller.calls += row.calls;
      if (row.lastUsed > caller.lastUsed) caller.lastUsed = row.lastUsed;
    } else entry.callers.push({ caller: name, lastUsed: row.lastUsed, calls: row.calls });
  }
  // A store that never recorded anything has complete records from today on.
  return { generatedAt: new Date(now).toISOString(), recordedSince: (await store.recordedSince()) ?? today, elements };
}

/** A store that holds nothing: the reports' answer when recording is off. */
export const emptyUsageStore: UsageStore = {
  add: async () => undefined,
  admitCallers: async (_day, callers) => new Set(callers),
  read: async () => [],
  recordedSince: async () => undefined,
  close: async () => undefined,
};
