// Prisma queries of webhook endpoints, the event log, deliveries and their attempts. Callers get
// rows; rules live in service.ts (the API), intake.ts (events in) and dispatcher.ts (deliveries out).
import { type DomainEvent, recordEvent, unitOfWork } from '@platform/events';
import { newId } from '@platform/ids';
import { findKeysetPage, type PageRequest, type RowsPage } from '@platform/paging';
import { Prisma, type PrismaClient } from '../generated/prisma/client';
import { inOwnerTransaction } from '../users/repository';

/** A URL a user registered to receive events at. */
export interface EndpointRow {
  id: string;
  ownerId: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  /** OWN or ALL. */
  scope: string;
  ordered: boolean;
  /** ENABLED or DISABLED. */
  status: string;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  failingSince: Date | null;
  disabledAt: Date | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/** An event of any service as webhooks log it. */
export interface EventRow {
  /** Arrival order here. */
  position: bigint;
  id: string;
  type: string;
  source: string;
  subject: string;
  ownerId: string | null;
  /** The event's data as it arrived (JSON). */
  data: unknown;
  occurredAt: Date;
  receivedAt: Date;
}

/** One event to one endpoint. */
export interface DeliveryRow {
  id: string;
  endpointId: string;
  eventId: string;
  eventPosition: bigint;
  subject: string;
  /** PENDING, SUCCEEDED or FAILED. */
  status: string;
  attemptCount: number;
  nextAttemptAt: Date | null;
  leasedUntil: Date | null;
  /** Times in a row it was cut short before its request was sent and put back uncounted. */
  putBacks: number;
  createdAt: Date;
}

/** One try of a delivery. */
export interface AttemptRow {
  id: string;
  deliveryId: string;
  attemptedAt: Date;
  outcome: string;
  statusCode: number | null;
  latencyMs: number;
  responseBody: string | null;
  error: string | null;
}
export type DeliveryWithAttempts = DeliveryRow & { attempts: AttemptRow[]; event: { type: string } };
/** A delivery taken for sending, with the account whose endpoint it goes to. */
/** Which of an endpoint's standings a delivery is sent under: each of the last two has a few workers only (dispatcher.ts). */
export type EndpointStanding = 'answering' | 'failing' | 'unproven';

export interface ClaimedDelivery {
  id: string;
  ownerId: string;
  /**
   * `failing`: its endpoint's last attempt failed (failing_since set); `unproven`: its endpoint has
   * never answered (no proven_at) nor failed yet; `answering`: it answered, and not failed since.
   */
  standing: EndpointStanding;
  /**
   * The lease this claim took, and its token: whatever the claimer writes of the delivery later
   * (an attempt, a put-back) is written only while the row still holds it. Another replica can
   * claim the delivery only once it ran out, at its own clock's now plus the lease, so a later
   * claim's lease ends later (replicas' clocks agree to well within the lease): two never hold the same one.
   */
  leasedUntil: Date;
}

/** Which due deliveries a claim may take: what the workers already sending leave room for. */
export interface ClaimRoom {
  /** Accounts at their share of the workers: their deliveries wait, however long due. */
  passOver: readonly string[];
  /** Whether a delivery to a failing endpoint may be taken. */
  failingToo: boolean;
  /** Whether a delivery to an unproven endpoint may be taken, and the accounts whose such deliveries wait (sending one already, or had their turn). */
  unprovenToo: boolean;
  passOverUnproven: readonly string[];
}
/**
 * The due deliveries a claim with `room` may take (alias `d`), each with its owner and its
 * endpoint's standing: claimDue takes the oldest of them, unprovenDue asks whether one is unproven.
 */
function dueDeliveries(now: Date, room: ClaimRoom): Prisma.Sql {
  return Prisma.sql`
        SELECT d.id, e.owner_id,
          CASE WHEN e.failing_since IS NOT NULL THEN 'failing' WHEN e.proven_at IS NULL THEN 'unproven' ELSE 'answering' END AS standing
        FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'PENDING' AND d.next_attempt_at <= ${now} AND e.status = 'ENABLED'
          AND NOT (e.owner_id::text = ANY(${room.passOver}::text[]))
          AND (${room.failingToo} OR e.failing_since IS NULL)
          AND (e.failing_since IS NOT NULL OR e.proven_at IS NOT NULL OR (${room.unprovenToo} AND NOT (e.owner_id::text = ANY(${room.passOverUnproven}::text[]))))
          AND (NOT e.ordered OR NOT EXISTS (
            SELECT 1 FROM webhook_deliveries earlier
            WHERE earlier.endpoint_id = d.endpoint_id AND earlier.subject = d.subject AND earlier.status = 'PENDING' AND earlier.event_position < d.event_position))`;
}

/** What a delivery needs to be sent: the event and the endpoint it goes to. */
export type DeliveryToSend = DeliveryRow & { event: EventRow; endpoint: EndpointRow };

export interface NewEndpoint {
  ownerId: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  scope: 'OWN' | 'ALL';
  ordered: boolean;
  secret: string;
}

/** `provenAt: null`: the endpoint is again one never heard from (its deliveries share the unproven endpoints' few workers until one succeeds). */
export type EndpointChanges = Partial<Pick<EndpointRow, 'url' | 'description' | 'eventTypes' | 'scope' | 'ordered' | 'status' | 'disabledAt' | 'failingSince' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'> & { provenAt: null }>;

/**
 * Disabling endpoints that failed too long: as of `at`, those failing since `failingBefore` or
 * earlier; `event` tells the owner. `at` is the dispatcher's one clock reading: the endpoint's
 * disabledAt and updatedAt, and its event's time.
 */
export interface EndpointDisabling {
  at: Date;
  failingBefore: Date;
  event: (endpoint: EndpointRow) => DomainEvent;
}

export interface IncomingEvent {
  id: string;
  type: string;
  source: string;
  subject: string;
  ownerId: string | null;
  data: unknown;
  occurredAt: Date;
}

export interface EventFilters {
  ownerId?: string;
  types?: string[];
  subject?: string;
}

// Attempts in the order they were made: by time, then by id (a UUIDv7, minted when the attempt is
// recorded) for two recorded in the same millisecond, so the log's last entry is the latest attempt.
const withAttempts = { attempts: { orderBy: [{ attemptedAt: 'asc' }, { id: 'asc' }] }, event: { select: { type: true } } } satisfies Prisma.WebhookDeliveryInclude;

export class WebhookRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Creates the endpoint unless its owner has `max` already (then undefined): counted and written under the owner's lock. */
  createEndpointWithin(max: number, endpoint: NewEndpoint): Promise<EndpointRow | undefined> {
    return inOwnerTransaction(this.prisma, endpoint.ownerId, async (tx) => {
      if ((await tx.webhookEndpoint.count({ where: { ownerId: endpoint.ownerId } })) >= max) return undefined;
      return tx.webhookEndpoint.create({ data: { id: newId(), status: 'ENABLED', ...endpoint } });
    });
  }

  findEndpoint(id: string): Promise<EndpointRow | null> {
    return this.prisma.webhookEndpoint.findUnique({ where: { id } });
  }

  listEndpoints(ownerId: string, page: PageRequest): Promise<RowsPage<EndpointRow>> {
    const where = { ownerId };
    return findKeysetPage(page, {
      find: (keyset) => this.prisma.webhookEndpoint.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip }),
      count: () => this.prisma.webhookEndpoint.count({ where }),
    });
  }

  /** Changes the endpoint when it is still at `version` (or at any version when none is given); null when it moved on or is gone. */
  async updateEndpoint(id: string, changes: EndpointChanges, version?: number): Promise<EndpointRow | null> {
    const { count } = await this.prisma.webhookEndpoint.updateMany({ where: { id, ...(version !== undefined ? { version } : {}) }, data: { ...changes, version: { increment: 1 } } });
    return count === 1 ? this.findEndpoint(id) : null;
  }

  /** Deletes the endpoint (its deliveries with it), at `version` only when given; false when gone or at another version. */
  async deleteEndpoint(id: string, version?: number): Promise<boolean> {
    const { count } = await this.prisma.webhookEndpoint.deleteMany({ where: { id, version } });
    return count === 1;
  }

  /** The owner of the latest logged event about `subject` that had one (events whose data does not name it, like a cancellation's completion). */
  async lastOwnerOf(subject: string): Promise<string | null> {
    const row = await this.prisma.webhookEvent.findFirst({ where: { subject, ownerId: { not: null } }, orderBy: { position: 'desc' }, select: { ownerId: true } });
    return row?.ownerId ?? null;
  }

  /**
   * Logs an event and queues one delivery to every enabled endpoint that wants it, in one
   * transaction. Answers how many deliveries were queued; null when the event was logged before
   * (a redelivery: nothing is queued twice).
   */
  async logAndFanOut(event: IncomingEvent, dueAt: Date): Promise<number | null> {
    return unitOfWork(this.prisma, async (tx) => {
      const [logged] = await tx.$queryRaw<{ position: bigint }[]>`
        INSERT INTO webhook_events (id, type, source, subject, owner_id, data, occurred_at)
        VALUES (${event.id}::uuid, ${event.type}, ${event.source}, ${event.subject}, ${event.ownerId}::uuid, ${JSON.stringify(event.data)}::jsonb, ${event.occurredAt})
        ON CONFLICT (id) DO NOTHING RETURNING position`;
      if (!logged) return null;
      const endpoints = await tx.webhookEndpoint.findMany({
        where: { status: 'ENABLED', eventTypes: { has: event.type }, OR: [{ scope: 'ALL' }, ...(event.ownerId ? [{ ownerId: event.ownerId }] : [])] },
        select: { id: true },
      });
      await tx.webhookDelivery.createMany({
        data: endpoints.map((endpoint) => ({ id: newId(), endpointId: endpoint.id, eventId: event.id, eventPosition: logged.position, subject: event.subject, status: 'PENDING', nextAttemptAt: dueAt })),
      });
      return endpoints.length;
    });
  }

  listEvents(filters: EventFilters, page: PageRequest): Promise<RowsPage<EventRow>> {
    const where: Prisma.WebhookEventWhereInput = { ownerId: filters.ownerId, type: filters.types ? { in: filters.types } : undefined, subject: filters.subject };
    return findKeysetPage(page, {
      column: 'occurredAt',
      find: (keyset) => this.prisma.webhookEvent.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip }),
      count: () => this.prisma.webhookEvent.count({ where }),
    });
  }

  listDeliveries(endpointId: string, statuses: string[] | undefined, page: PageRequest): Promise<RowsPage<DeliveryWithAttempts>> {
    const where: Prisma.WebhookDeliveryWhereInput = { endpointId, status: statuses ? { in: statuses } : undefined };
    return findKeysetPage(page, {
      find: (keyset) => this.prisma.webhookDelivery.findMany({ where: { AND: [where, keyset.where] }, orderBy: keyset.orderBy, take: keyset.take, skip: keyset.skip, include: withAttempts }),
      count: () => this.prisma.webhookDelivery.count({ where }),
    });
  }

  findDelivery(endpointId: string, id: string): Promise<DeliveryWithAttempts | null> {
    return this.prisma.webhookDelivery.findFirst({ where: { id, endpointId }, include: withAttempts });
  }

  /**
   * Makes a delivery due now again, whatever its state (a manual retry), unless an attempt of it is
   * under way: made due then, a second worker would send it beside the first. False in that case.
   */
  async requeueDelivery(id: string, dueAt: Date): Promise<boolean> {
    const { count } = await this.prisma.webhookDelivery.updateMany({
      where: { id, OR: [{ leasedUntil: null }, { leasedUntil: { lte: dueAt } }] },
      // Asked for by hand: its put-backs count from none, as after an attempt, and a lease run out is
      // ended, so the late answer of the replica that held it is not recorded over this retry.
      data: { status: 'PENDING', nextAttemptAt: dueAt, putBacks: 0, leasedUntil: null },
    });
    return count === 1;
  }

  /**
   * Takes up to `limit` due deliveries for sending: each is leased until `leaseUntil` (another
   * replica passes over it; a crash leaves it due again then). On an ordered endpoint a delivery
   * waits while an earlier one about the same resource is pending. What `room` leaves out waits:
   * the accounts at their share of the workers, deliveries to failing endpoints unless
   * `failingToo`, to unproven ones unless `unprovenToo` (and then of accounts not sending one yet).
   */
  async claimDue(now: Date, leaseUntil: Date, limit: number, room: ClaimRoom): Promise<ClaimedDelivery[]> {
    const rows = await this.prisma.$queryRaw<Omit<ClaimedDelivery, 'leasedUntil'>[]>`
      WITH due AS (
        ${dueDeliveries(now, room)}
        ORDER BY d.next_attempt_at, d.event_position
        LIMIT ${limit}
        FOR UPDATE OF d SKIP LOCKED)
      UPDATE webhook_deliveries SET next_attempt_at = ${leaseUntil}, leased_until = ${leaseUntil} FROM due WHERE webhook_deliveries.id = due.id
      RETURNING webhook_deliveries.id::text AS id, due.owner_id::text AS "ownerId", due.standing`;
    return rows.map((row) => ({ ...row, leasedUntil: leaseUntil }));
  }

  /** Whether a claim with `room` could take a delivery to an unproven endpoint now (one the claim before it passed over for an older one). */
  async unprovenDue(now: Date, room: ClaimRoom): Promise<boolean> {
    const [row] = await this.prisma.$queryRaw<{ due: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM (${dueDeliveries(now, room)}) due WHERE due.standing = 'unproven') AS due`;
    return row?.due === true;
  }

  /**
   * Ends a delivery's lease with no attempt recorded: due again at `dueAt`, its attempts and its
   * endpoint as they were; `putBack` counts one more cut before its request was sent (putBacks).
   * Only the lease `lease` names (the claimer's): once it ran out and another replica claimed the
   * delivery, that replica's lease stands. False when the lease was no longer held.
   */
  async releaseDelivery(id: string, lease: Date, release: { dueAt: Date; putBack: boolean }): Promise<boolean> {
    const { count } = await this.prisma.webhookDelivery.updateMany({
      where: { id, status: 'PENDING', leasedUntil: lease },
      data: { nextAttemptAt: release.dueAt, leasedUntil: null, ...(release.putBack ? { putBacks: { increment: 1 } } : {}) },
    });
    return count === 1;
  }

  findDeliveryToSend(id: string): Promise<DeliveryToSend | null> {
    return this.prisma.webhookDelivery.findUnique({ where: { id }, include: { event: true, endpoint: true } });
  }

  /**
   * Writes an attempt and the delivery's and endpoint's state after it, in one unit of work. The
   * endpoint's state is decided here, in SQL, not from what the dispatcher read before sending:
   * replicas and workers record attempts at the same endpoint side by side. A failure starts its
   * failing-since clock unless it runs already, then `disabling` applies (see disableIfFailing).
   *
   * Only while the delivery still holds `lease`, the one its claim took: a replica whose lease ran
   * out while its receiver was slow, and whose delivery another replica claimed and tried since,
   * would otherwise add a second attempt and put its old result over the newer one (a success
   * turned back into a pending retry, its endpoint marked failing). Such a late result writes
   * nothing: `recorded` false. Else `disabled` is the endpoint when this attempt disabled it.
   */
  async recordAttempt(
    attempt: Omit<AttemptRow, 'id'>,
    lease: Date,
    delivery: { status: string; attemptCount: number; nextAttemptAt: Date | null },
    endpoint: { id: string; succeeded: boolean; disabling: EndpointDisabling },
  ): Promise<{ recorded: boolean; disabled: EndpointRow | null }> {
    // A unit of work: the disabled event it may record wakes the relay at its commit, not at its next poll.
    return unitOfWork(this.prisma, async (tx) => {
      // The delivery first: the update locks its row, so a claim racing this one waits for the commit and sees the result.
      const { count } = await tx.webhookDelivery.updateMany({ where: { id: attempt.deliveryId, status: 'PENDING', leasedUntil: lease }, data: { ...delivery, leasedUntil: null, putBacks: 0 } });
      if (count !== 1) return { recorded: false, disabled: null };
      await tx.webhookAttempt.create({ data: { id: newId(), ...attempt } });
      if (endpoint.succeeded) {
        // It answers: no longer failing, and proven from its first success on (written only when either changes).
        await tx.$executeRaw`
          UPDATE webhook_endpoints SET failing_since = NULL, proven_at = COALESCE(proven_at, ${attempt.attemptedAt})
          WHERE id = ${endpoint.id}::uuid AND (failing_since IS NOT NULL OR proven_at IS NULL)`;
        return { recorded: true, disabled: null };
      }
      await tx.webhookEndpoint.updateMany({ where: { id: endpoint.id, failingSince: null }, data: { failingSince: attempt.attemptedAt } });
      return { recorded: true, disabled: await disableIfFailing(tx, endpoint.id, endpoint.disabling) };
    });
  }

  /**
   * Disables every enabled endpoint failing since `disabling.failingBefore` or earlier, whether
   * or not an attempt is still to come, each in a unit of work of its own; answers those this
   * call disabled (another replica's concurrent call disables the rest, once).
   */
  async disableFailingEndpoints(disabling: EndpointDisabling): Promise<EndpointRow[]> {
    const candidates = await this.prisma.webhookEndpoint.findMany({ where: { status: 'ENABLED', failingSince: { lte: disabling.failingBefore } }, select: { id: true } });
    const disabled: EndpointRow[] = [];
    for (const { id } of candidates) {
      const endpoint = await unitOfWork(this.prisma, (tx) => disableIfFailing(tx, id, disabling));
      if (endpoint) disabled.push(endpoint);
    }
    return disabled;
  }

  /** Deletes events received before `before` (their deliveries and attempts go with them). */
  async purgeEventsBefore(before: Date): Promise<number> {
    const { count } = await this.prisma.webhookEvent.deleteMany({ where: { receivedAt: { lt: before } } });
    return count;
  }
}

type Transaction = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0];

/**
 * Disables the endpoint when it is still enabled and failing since `failingBefore` or earlier, and
 * records the event only when this update changed it: of two transactions racing, the second
 * waits for the first's row lock, finds it DISABLED and changes nothing, so the owner hears once.
 */
async function disableIfFailing(tx: Transaction, id: string, disabling: EndpointDisabling): Promise<EndpointRow | null> {
  const { count } = await tx.webhookEndpoint.updateMany({
    where: { id, status: 'ENABLED', failingSince: { lte: disabling.failingBefore } },
    // updatedAt too, else Prisma stamps its own clock's: the event announcing the change happens when the endpoint says it changed.
    data: { status: 'DISABLED', disabledAt: disabling.at, updatedAt: disabling.at, version: { increment: 1 } },
  });
  if (count !== 1) return null;
  const disabled = await tx.webhookEndpoint.findUniqueOrThrow({ where: { id } });
  await recordEvent(tx, disabling.event(disabled));
  return disabled;
}
