// Sends due deliveries: claims them (a lease, so replicas share the work), checks the URL again
// after resolving it, signs with every secret in force, records the attempt, schedules the next
// one or gives up, and disables an endpoint that failed for 5 days (telling its owner with a
// webhook_endpoint.disabled event, through the outbox like every other event): at a failed attempt,
// and by a check once a minute, since an endpoint whose last delivery ran out of retries (about 3
// days in) may see no attempt again. One account's deliveries take at most a few of the workers at
// a time, so an account whose endpoints answer slowly or never holds up its own deliveries alone;
// deliveries to endpoints failing, or never heard from, take a few workers between all accounts;
// and an attempt that is slow to be answered leaves its worker for the next delivery.
import type { Deprecation } from '@platform/deprecations';
import { domainEvent } from '@platform/events';
import type { Logger } from '@platform/service-kit';
import { Counter, Histogram, type Registry } from 'prom-client';
import { type AddressGuard, ForbiddenUrl } from './address-guard';
import { type AttemptResult, type NotSent, sendWebhook } from './delivery-client';
import { applyPayloadDeprecations } from './payload-deprecations';
import { toEventResponse } from './representation';
import type { ClaimedDelivery, ClaimRoom, DeliveryToSend, EndpointDisabling, WebhookRepository } from './repository';
import { DELIVERY_CONNECT_TIMEOUT_MS, DELIVERY_TIMEOUT_MS, DISABLE_AFTER_MS, EVENT_RETENTION_MS, MAX_ATTEMPTS, nextAttemptAt, RETRY_DELAYS_MS } from './retry-schedule';
import { signedHeaders } from './signing';

export interface DispatcherSettings {
  clock?: () => Date;
  /** Deliveries sent at once by this replica. */
  concurrency?: number;
  /** Deliveries to one account's endpoints sent at once by this replica. */
  accountConcurrency?: number;
  timeoutMs?: number;
  connectTimeoutMs?: number;
  /** An attempt unanswered after this leaves its worker (SLOW_ATTEMPT_AFTER_MS). */
  slowAfterMs?: number;
  /** Slow attempts kept going beside the workers (SLOW_ATTEMPTS). */
  slowAttempts?: number;
  /** The deprecation registry's entries (DEPRECATIONS_FILE): its webhook entries shape each delivery (payload-deprecations.ts). */
  deprecations?: readonly Deprecation[];
}

/** Workers of one replica. */
export const DISPATCH_WORKERS = 8;
/**
 * Workers one account's deliveries may hold at once: an account has up to 20 endpoints, each
 * attempt may take 15 s, and deliveries are claimed oldest first, so without a share one account
 * whose endpoints never answer would hold every worker and queue everyone else's deliveries.
 */
export const WORKERS_PER_ACCOUNT = 2;
/**
 * Workers that deliveries to failing endpoints (whose last attempt failed) may hold at once,
 * whatever accounts they belong to: a receiver that hangs makes each attempt take the whole
 * timeout, and several accounts' such endpoints, each at its share, would otherwise hold every
 * worker and stall everyone else's deliveries (a share per account cannot stop many accounts).
 */
export const FAILING_ENDPOINT_WORKERS = 2;
/**
 * Workers that deliveries to unproven endpoints (never answered yet) may hold at once, one per
 * account: without it, accounts registering fresh endpoints that hang would hold every worker for
 * a whole timeout each, and again with every new endpoint, before any of them counts as failing.
 * Endpoints that answer keep the other workers; a new endpoint's first delivery waits one turn of
 * each other account with unproven endpoints' deliveries due (`unprovenRound`), not all of them.
 */
export const UNPROVEN_ENDPOINT_WORKERS = 2;

/**
 * How long an attempt holds its worker before it counts as slow: it then goes on beside the
 * workers, and its worker takes the next delivery. Shares per account and lanes for failing and
 * unproven endpoints cannot see an endpoint that answered before and hangs now: five accounts at
 * their share of two held all eight workers for a whole timeout, and another customer's delivery
 * waited 30 s (an outside test). Now such a hang holds a worker this long.
 */
export const SLOW_ATTEMPT_AFTER_MS = 2_000;
/**
 * Slow attempts one replica keeps going beside its workers. Past them, an attempt that turns slow
 * is cut short as a timeout (retried on its schedule; its endpoint counts as failing and shares
 * the failing endpoints' few workers from then on), so slow receivers cannot pile up without end.
 * One cut before its request was sent (see NOT_SENT_AGAIN_AFTER_MS) is no attempt.
 */
export const SLOW_ATTEMPTS = 8;

/**
 * An attempt cut short before its request was handed to a connection (no connection yet, a TLS
 * handshake unfinished, the address still being checked) is no attempt: the receiver never saw
 * it. Its delivery is due again this much later, its attempt count and its endpoint's standing
 * as they were (before, it was a timeout that marked the endpoint failing, "cut short after 0 ms").
 * Not at once: while the slow attempts stay taken it would be cut again straight away. And not
 * without end: see NOT_SENT_PUT_BACKS.
 */
export const NOT_SENT_AGAIN_AFTER_MS = RETRY_DELAYS_MS[0];

/**
 * Put-backs in a row a delivery gets; cut short before it was sent once more, it counts as an
 * attempt (a timeout that says so), retried on its schedule, its endpoint failing. Without a
 * bound, while the slow attempts stayed taken a delivery whose receiver is slow to take the
 * connection (or whose address is slow to check) was claimed, cut and put back every 5 s for as
 * long as they did, never attempted, never counted, its retries and the 5-day rule never reached.
 */
export const NOT_SENT_PUT_BACKS = 3;

/** How long a claim holds a delivery: another replica passes over it until then (a crash leaves it due again). */
export const LEASE_MS = 60_000;
const PURGE_EVERY_MS = 3_600_000;
const DISABLE_CHECK_EVERY_MS = 60_000;

/** Why an attempt was cut short when it was the stop's doing (its lease handed back), not the slow attempts'. */
const STOPPING = Symbol('the dispatcher is stopping');

/** Whether `work` settled (resolved or rejected) within `ms`. */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([work.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

const countUp = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
function countDown(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left) counts.set(key, left);
  else counts.delete(key);
}

export class WebhookDispatcher {
  private readonly clock: () => Date;
  private readonly concurrency: number;
  private readonly accountConcurrency: number;
  private readonly timeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly slowAfterMs: number;
  private readonly slowAttempts: number;
  private readonly deprecations: readonly Deprecation[];
  private readonly outcomes: Counter;
  private readonly latency: Histogram;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly workers = new Set<Promise<void>>();
  /** Set by stop(): no claim from then on. */
  private stopping = false;
  /** What cuts each attempt under way short, for a stop whose grace ran out. */
  private readonly underWay = new Set<AbortController>();
  /** Attempts that turned slow and left their workers; each settles once recorded. */
  private readonly slow = new Set<Promise<void>>();
  /** Why a worker stopped early, reported when the drain ends. */
  private failure: unknown;
  /** Deliveries being sent, by account. */
  private readonly sending = new Map<string, number>();
  /** Deliveries being sent to failing endpoints. */
  private sendingToFailing = 0;
  /** The accounts sending a delivery to an unproven endpoint: one each at most. */
  private readonly sendingToUnproven = new Set<string>();
  /**
   * The accounts that had their turn at an unproven endpoint in this round: passed over while
   * another account's such delivery is due, however old their own (before, one account's backlog
   * of new endpoints, oldest first, went ahead of another account's first delivery). The round
   * ends when a claim with room for one finds none of another account: the oldest go first again.
   */
  private readonly unprovenRound = new Set<string>();
  /** The last claim: claims run one at a time, so each sees the shares the ones before it took. */
  private claiming: Promise<unknown> = Promise.resolve();
  /**
   * Counts what can make a delivery claimable: a wake (new deliveries, the tick: time passing) and
   * every attempt recorded (a share freed, an ordered endpoint's next delivery unblocked).
   */
  private changes = 0;
  /** `changes` when a claim last found nothing: until it moves, another claim would find nothing too. */
  private nothingAt = -1;
  private lastPurge = 0;
  private lastDisableCheck = 0;

  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly guard: AddressGuard,
    private readonly logger: Logger,
    settings: DispatcherSettings = {},
    registry?: Registry,
  ) {
    this.clock = settings.clock ?? (() => new Date());
    this.concurrency = settings.concurrency ?? DISPATCH_WORKERS;
    this.accountConcurrency = settings.accountConcurrency ?? WORKERS_PER_ACCOUNT;
    this.timeoutMs = settings.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.connectTimeoutMs = settings.connectTimeoutMs ?? DELIVERY_CONNECT_TIMEOUT_MS;
    this.slowAfterMs = settings.slowAfterMs ?? SLOW_ATTEMPT_AFTER_MS;
    this.slowAttempts = settings.slowAttempts ?? SLOW_ATTEMPTS;
    this.deprecations = settings.deprecations ?? [];
    const registers = registry ? [registry] : [];
    this.outcomes = new Counter({ name: 'webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome (SUCCEEDED, HTTP_ERROR, TIMEOUT, NETWORK_ERROR, FORBIDDEN_ADDRESS; NOT_SENT: cut short before it was sent, or by a stop before its answer, put back, not counted)', labelNames: ['outcome'], registers });
    this.latency = new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'From sending a webhook to its answer (or the timeout), by outcome',
      labelNames: ['outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers,
    });
  }

  /** Looks for due deliveries every `intervalMs`, and at once when woken. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => this.wake(), intervalMs);
    this.timer.unref();
  }

  /**
   * Claims nothing more (before, the workers went on claiming until nothing was due, and a stop
   * waited for every delivery due, sending deliveries a replica going on would have sent), lets
   * the attempts under way end within `graceMs`, then cuts what is left short and hands its
   * lease back, due at once for the other replicas: an answer already in is recorded, one not
   * sent or not answered yet is no attempt (its receiver may have it: the webhook-id lets it tell).
   */
  async stop(graceMs = this.timeoutMs): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    this.timer = undefined;
    const running = this.running;
    if (running && !(await settledWithin(running, graceMs))) {
      for (const underWay of this.underWay) underWay.abort(STOPPING);
      await running;
    }
  }

  /** New deliveries are due: send them now rather than at the next tick (once started; before, drain() alone sends). */
  wake(): void {
    this.changes++;
    if (!this.timer) return;
    if (this.running) {
      this.again = true;
      // Workers that found nothing they could take have left; those still sending may be one
      // account's, each stuck for up to the timeout, so the new deliveries get workers of their own.
      this.addWorkers();
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /** Sends every delivery due now (and those falling due while it runs); resolves when none is left, slow attempts included. */
  async drain(): Promise<void> {
    this.changes++; // a fresh look, whatever the last claim found
    try {
      this.addWorkers();
      while (this.workers.size || this.slow.size) await Promise.all([...this.workers, ...this.slow]);
      const failure = this.failure;
      this.failure = undefined;
      if (failure) throw failure;
      if (this.stopping) return; // the replicas going on check and purge
      await this.disableLongFailing();
      await this.purgeOldEvents();
    } catch (error) {
      this.logger.error({ err: error }, 'webhook dispatch failed; the deliveries stay due');
    }
  }

  /** Brings the workers up to `concurrency`. Each claims one delivery at a time: a receiver taking its 15 s holds up one worker, not a batch. */
  private addWorkers(): void {
    while (this.workers.size < this.concurrency) {
      const worker: Promise<void> = this.work()
        .catch((error: unknown) => {
          this.failure = error;
        })
        .finally(() => this.workers.delete(worker));
      this.workers.add(worker);
    }
  }

  private async work(): Promise<void> {
    for (;;) {
      const claimed = await this.claim();
      if (!claimed) return;
      const cutShort = new AbortController();
      this.underWay.add(cutShort);
      // The account's share and the lanes count the attempt until it is recorded, wherever it runs.
      const attempt = this.deliver(claimed, cutShort.signal).finally(() => {
        this.underWay.delete(cutShort);
        this.changes++;
        if (claimed.standing === 'failing') this.sendingToFailing--;
        if (claimed.standing === 'unproven') this.sendingToUnproven.delete(claimed.ownerId);
        countDown(this.sending, claimed.ownerId);
      });
      if (!(await settledWithin(attempt, this.slowAfterMs))) {
        if (this.goOnBeside(attempt)) continue;
        cutShort.abort(); // no room beside the workers: it ends now, as a timeout (or put back, when not sent yet)
      }
      await attempt;
    }
  }

  /**
   * Lets a slow attempt finish beside the workers while there is room (false when there is none);
   * when it is recorded, workers come back for what its share held back. Adding them is all it
   * takes: the drain that waits for this attempt is still under way and waits for them too, and
   * the attempt's end already moved `changes` (a wake would only ask for one more drain after it).
   */
  private goOnBeside(attempt: Promise<void>): boolean {
    if (this.slow.size >= this.slowAttempts) return false;
    const beside: Promise<void> = attempt
      .catch((error: unknown) => {
        this.failure = error;
      })
      .finally(() => {
        this.slow.delete(beside);
        this.addWorkers();
      });
    this.slow.add(beside);
    return true;
  }

  /**
   * The oldest due delivery of an account below its share of the workers, counted against that
   * share; to a failing endpoint only while their few workers are not all taken, and to an
   * unproven one likewise, one per account, and in turns between accounts (`unprovenRound`).
   */
  private claim(): Promise<ClaimedDelivery | undefined> {
    const claimed = this.claiming.then(async () => {
      // The workers of one wake claim one after another: once one found nothing due, the rest
      // leave without asking the database again (before, each tick cost a query per worker).
      const seen = this.changes;
      if (this.stopping || seen === this.nothingAt) return undefined;
      const now = this.clock();
      const unprovenToo = this.sendingToUnproven.size < UNPROVEN_ENDPOINT_WORKERS;
      const room = (): ClaimRoom => ({
        passOver: [...this.sending].filter(([, count]) => count >= this.accountConcurrency).map(([ownerId]) => ownerId),
        failingToo: this.sendingToFailing < FAILING_ENDPOINT_WORKERS,
        unprovenToo,
        passOverUnproven: [...new Set([...this.sendingToUnproven, ...this.unprovenRound])],
      });
      const claimDue = () => this.webhooks.claimDue(now, new Date(now.getTime() + LEASE_MS), 1, room());
      let [delivery] = await claimDue();
      // The round ends when no other account's unproven delivery is due: the accounts that had
      // their turn may go again, at once when nothing else was due. An older delivery to an
      // answering endpoint taken first does not end it: one newer, of an account still waiting
      // for its turn, may be due behind it (before, it ended the round, and with answering
      // deliveries due, the usual case, an account's backlog went again ahead of another's first).
      if (unprovenToo && delivery?.standing !== 'unproven' && [...this.unprovenRound].some((ownerId) => !this.sendingToUnproven.has(ownerId))) {
        if (!delivery || !(await this.webhooks.unprovenDue(now, room()))) {
          this.unprovenRound.clear();
          if (!delivery) [delivery] = await claimDue();
        }
      }
      if (!delivery) this.nothingAt = seen;
      if (delivery) countUp(this.sending, delivery.ownerId);
      if (delivery?.standing === 'failing') this.sendingToFailing++;
      if (delivery?.standing === 'unproven') {
        this.sendingToUnproven.add(delivery.ownerId);
        this.unprovenRound.add(delivery.ownerId);
      }
      return delivery;
    });
    this.claiming = claimed.catch(() => undefined);
    return claimed;
  }

  private async deliver(claimed: ClaimedDelivery, cutShort: AbortSignal): Promise<void> {
    const delivery = await this.webhooks.findDeliveryToSend(claimed.id);
    if (!delivery || delivery.status !== 'PENDING') return;
    let result = await this.attempt(delivery, cutShort);
    // Cut by the stop with no answer in: handed back, due at once, nothing counted or marked.
    if (cutShort.reason === STOPPING && (result.outcome === 'NOT_SENT' || result.outcome === 'TIMEOUT')) {
      this.outcomes.inc({ outcome: 'NOT_SENT' });
      return this.handBack(delivery, claimed.leasedUntil);
    }
    if (result.outcome === 'NOT_SENT') {
      if (delivery.putBacks < NOT_SENT_PUT_BACKS) {
        this.outcomes.inc({ outcome: result.outcome });
        return this.putBack(delivery, claimed.leasedUntil);
      }
      result = { outcome: 'TIMEOUT', statusCode: null, latencyMs: result.latencyMs, responseBody: null, error: `not sent: cut short before its request went out ${delivery.putBacks + 1} times in a row while many receivers were slow` };
    }
    this.outcomes.inc({ outcome: result.outcome });
    this.latency.observe({ outcome: result.outcome }, result.latencyMs / 1000);
    await this.record(delivery, claimed.leasedUntil, result);
  }

  private async attempt(delivery: DeliveryToSend, cutShort: AbortSignal): Promise<AttemptResult | NotSent> {
    const { endpoint } = delivery;
    let target;
    try {
      target = await this.guard.pin(endpoint.url);
    } catch (error) {
      if (!(error instanceof ForbiddenUrl)) throw error;
      return { outcome: error.unreachable ? 'NETWORK_ERROR' : 'FORBIDDEN_ADDRESS', statusCode: null, latencyMs: 0, responseBody: null, error: error.reason };
    }
    const now = this.clock();
    const secrets = [endpoint.secret, ...(endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now ? [endpoint.previousSecret] : [])];
    // Deprecated payload fields: announced in headers, or left out in a brownout and past the sunset; then signed.
    const { payload, headers } = applyPayloadDeprecations(this.deprecations, delivery.event.type, toEventResponse(delivery.event), now);
    const body = JSON.stringify(payload);
    // The event id is the webhook-id of every attempt: receivers deduplicate on it.
    return sendWebhook({ target, body, headers: { ...headers, ...signedHeaders(delivery.eventId, now, body, secrets) }, timeoutMs: this.timeoutMs, connectTimeoutMs: this.connectTimeoutMs, cutShort });
  }

  /** Cut short before it was sent: due again a little later, nothing charged but the put-back (NOT_SENT_AGAIN_AFTER_MS, NOT_SENT_PUT_BACKS). */
  private async putBack(delivery: DeliveryToSend, lease: Date): Promise<void> {
    await this.webhooks.releaseDelivery(delivery.id, lease, { dueAt: new Date(this.clock().getTime() + NOT_SENT_AGAIN_AFTER_MS), putBack: true });
    this.logger.info({ deliveryId: delivery.id, endpointId: delivery.endpoint.id, putBacks: delivery.putBacks + 1 }, 'webhook attempt cut short before it was sent: put back, not counted');
  }

  /** Cut short by the stop: due now, for a replica that goes on. */
  private async handBack(delivery: DeliveryToSend, lease: Date): Promise<void> {
    await this.webhooks.releaseDelivery(delivery.id, lease, { dueAt: this.clock(), putBack: false });
    this.logger.info({ deliveryId: delivery.id, endpointId: delivery.endpoint.id }, 'webhook attempt cut short by the stop: handed back to the other replicas, not counted');
  }

  private async record(delivery: DeliveryToSend, lease: Date, result: AttemptResult): Promise<void> {
    const attemptedAt = this.clock();
    const attemptCount = delivery.attemptCount + 1;
    const succeeded = result.outcome === 'SUCCEEDED';
    const next = succeeded ? null : nextAttemptAt(attemptCount, attemptedAt);
    const status = succeeded ? 'SUCCEEDED' : next ? 'PENDING' : 'FAILED';
    const { endpoint } = delivery;
    // Whether the endpoint failed long enough is the repository's call, on the row as it is at
    // the write: what this worker read before sending may be stale (another worker's success, or
    // disable, in between).
    const { recorded, disabled } = await this.webhooks.recordAttempt(
      { deliveryId: delivery.id, attemptedAt, outcome: result.outcome, statusCode: result.statusCode, latencyMs: result.latencyMs, responseBody: result.responseBody, error: result.error },
      lease,
      { status, attemptCount, nextAttemptAt: next },
      { id: endpoint.id, succeeded, disabling: this.disablingAt(attemptedAt) },
    );
    if (!recorded) {
      this.logger.warn({ deliveryId: delivery.id, endpointId: endpoint.id, outcome: result.outcome }, 'webhook attempt not recorded: its lease ran out and another replica took the delivery over (or it is gone)');
      return;
    }
    if (disabled) this.logger.warn({ endpointId: endpoint.id, failingSince: disabled.failingSince }, 'webhook endpoint disabled after failing for 5 days');
    if (!succeeded && attemptCount >= MAX_ATTEMPTS) this.logger.info({ deliveryId: delivery.id, endpointId: endpoint.id }, 'webhook delivery gave up after its last attempt');
  }

  /** The 5-day rule as of `at`, with the webhook_endpoint.disabled event telling the owner. */
  private disablingAt(at: Date): EndpointDisabling {
    return {
      at,
      failingBefore: new Date(at.getTime() - DISABLE_AFTER_MS),
      event: (endpoint) =>
        domainEvent('webhook_endpoint.disabled', endpoint.id, {
          id: endpoint.id,
          userId: endpoint.ownerId,
          url: endpoint.url,
          failingSince: endpoint.failingSince!.toISOString(),
          disabledAt: at.toISOString(),
        }, at),
    };
  }

  /** The 5-day rule for endpoints no attempt brings to it: failing since 5 days, with or without retries left. */
  private async disableLongFailing(): Promise<void> {
    const now = this.clock();
    if (now.getTime() - this.lastDisableCheck < DISABLE_CHECK_EVERY_MS) return;
    this.lastDisableCheck = now.getTime();
    for (const endpoint of await this.webhooks.disableFailingEndpoints(this.disablingAt(now))) {
      this.logger.warn({ endpointId: endpoint.id, failingSince: endpoint.failingSince }, 'webhook endpoint disabled after failing for 5 days');
    }
  }

  private async purgeOldEvents(): Promise<void> {
    const now = this.clock();
    if (now.getTime() - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now.getTime();
    const purged = await this.webhooks.purgeEventsBefore(new Date(now.getTime() - EVENT_RETENTION_MS));
    if (purged) this.logger.info({ purged }, 'events older than 30 days purged');
  }
}
