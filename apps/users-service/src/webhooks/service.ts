// Rules of webhook endpoints and the event log: who may register what, where a URL may point,
// the secret shown once and rotated with a grace period, which events a caller may read.
import { isAdmin, type Principal } from '@platform/auth';
import { Conflict, Forbidden, Invalid, NotFound, VersionMismatch } from '@platform/errors';
import { type ListEnvelope, parseSort, toListEnvelope, toPageRequest } from '@platform/paging';
import { unchangedAtVersion, updateAtVersion } from '@platform/service-kit';
import { type AddressGuard, ForbiddenUrl } from './address-guard';
import type { DeliveryWithAttempts, EndpointChanges, EndpointRow, EventRow, WebhookRepository } from './repository';
import { PREVIOUS_SECRET_GRACE_MS } from './retry-schedule';
import { type CreateEndpointInput, endpointSortFields, eventSortFields, type ListDeliveriesQuery, type ListEventsQuery, type PatchEndpointInput } from './schemas';
import { newSigningSecret } from './signing';

export interface WebhookServiceSettings {
  cursorSecret: string;
  clock?: () => Date;
  /** Called when deliveries became due outside the dispatcher's own schedule (a manual retry). */
  onDeliveriesDue?: () => void;
}

/** Endpoints one user may have: each event is sent once per endpoint, so this bounds what one account can make the platform send. */
export const MAX_ENDPOINTS_PER_USER = 20;

function forbiddenUrl(error: ForbiddenUrl): Invalid {
  const message = error.unreachable ? `The URL cannot be reached: ${error.reason}.` : `The URL is not allowed: ${error.reason}.`;
  return new Invalid(message, [{ field: 'url', code: 'NOT_ALLOWED', message: error.reason }]);
}

/** Whether a field's new value is the one it holds (a list: the same items in the same order). */
function sameValue(held: unknown, sent: unknown): boolean {
  if (Array.isArray(held) && Array.isArray(sent)) return held.length === sent.length && held.every((item, index) => item === sent[index]);
  return held === sent;
}

export class WebhookService {
  private readonly clock: () => Date;

  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly guard: AddressGuard,
    private readonly settings: WebhookServiceSettings,
  ) {
    this.clock = settings.clock ?? (() => new Date());
  }

  async create(principal: Principal, input: CreateEndpointInput): Promise<EndpointRow> {
    const scope = input.scope ?? 'OWN';
    this.checkScope(principal, scope);
    // The URL's lookup may take seconds: done before the owner's lock, which only counts and writes.
    await this.checkUrl(input.url);
    const created = await this.webhooks.createEndpointWithin(MAX_ENDPOINTS_PER_USER, {
      ownerId: principal.userId,
      url: input.url,
      description: input.description ?? null,
      eventTypes: [...new Set(input.eventTypes)],
      scope,
      ordered: input.ordered ?? false,
      secret: newSigningSecret(),
    });
    if (!created) {
      throw new Invalid(`An account may have at most ${MAX_ENDPOINTS_PER_USER} webhook endpoints; delete one first.`, [
        { field: 'url', code: 'NOT_ALLOWED', message: `at most ${MAX_ENDPOINTS_PER_USER} endpoints per account` },
      ]);
    }
    return created;
  }

  async list(principal: Principal, query: { size?: number; cursor?: string; page?: number; offset?: number; limit?: number; withTotal?: boolean; sort?: string }): Promise<ListEnvelope<EndpointRow>> {
    const { sort: sortParam, ...paging } = query;
    const sort = parseSort(sortParam, endpointSortFields, { field: 'createdAt', direction: 'desc' });
    const request = toPageRequest(paging, { list: 'webhook-endpoints', sort, filters: { owner: principal.userId }, secret: this.settings.cursorSecret });
    const { rows, total } = await this.webhooks.listEndpoints(principal.userId, request);
    return toListEnvelope(rows, request, { secret: this.settings.cursorSecret, sortValue: (row) => row.createdAt, totalCount: total });
  }

  /**
   * The caller's own endpoint; anyone else's (an admin's call included) is 404: endpoints are
   * their owner's alone. Here and below, ids are as the /webhook-endpoints/{id} routes checked
   * them (one that is no UUID was answered 404 there); nothing but those routes calls these.
   */
  async get(principal: Principal, id: string): Promise<EndpointRow> {
    const endpoint = await this.webhooks.findEndpoint(id);
    if (!endpoint || endpoint.ownerId !== principal.userId) throw NotFound.of('Webhook endpoint');
    return endpoint;
  }

  async patch(principal: Principal, id: string, input: PatchEndpointInput, expectedVersion?: number): Promise<EndpointRow> {
    const endpoint = await this.get(principal, id);
    if (input.scope) this.checkScope(principal, input.scope);
    if (input.url !== undefined) await this.checkUrl(input.url);
    const changes: EndpointChanges = {
      url: input.url,
      description: input.description,
      eventTypes: input.eventTypes ? [...new Set(input.eventTypes)] : undefined,
      scope: input.scope,
      ordered: input.ordered,
    };
    // Another URL is another receiver: it is proven by its own first success, not the old one's.
    if (input.url !== undefined && input.url !== endpoint.url) changes.provenAt = null;
    if (input.status && input.status !== endpoint.status) {
      // Enabling again starts the 5-day failure count afresh; with its failures forgotten, it is
      // unproven until it answers again (else it would take the answering endpoints' workers).
      Object.assign(changes, input.status === 'DISABLED' ? { status: 'DISABLED', disabledAt: this.clock() } : { status: 'ENABLED', disabledAt: null, failingSince: null, provenAt: null });
    }
    // A change to what the endpoint already is writes nothing: the version, the ETag other
    // clients hold for their If-Match, stays. If-Match still counts.
    if (Object.entries(changes).every(([field, value]) => value === undefined || sameValue(endpoint[field as keyof EndpointRow], value))) return unchangedAtVersion(endpoint, expectedVersion);
    const updated = await this.webhooks.updateEndpoint(endpoint.id, changes, expectedVersion);
    if (!updated) {
      if (expectedVersion !== undefined) throw new VersionMismatch();
      throw NotFound.of('Webhook endpoint');
    }
    return updated;
  }

  /** Deletes the endpoint; with `expectedVersion` (If-Match) only at that version, as a change is made. */
  async delete(principal: Principal, id: string, expectedVersion?: number): Promise<void> {
    const endpoint = await this.get(principal, id);
    if (!(await this.webhooks.deleteEndpoint(endpoint.id, expectedVersion))) {
      if (expectedVersion !== undefined) throw new VersionMismatch();
      throw NotFound.of('Webhook endpoint');
    }
  }

  /**
   * A new secret, shown once; the one it replaces keeps signing (both signatures in every
   * delivery) for the overlap asked, 24 hours unless said, so receivers can switch without losing
   * a delivery; 0 drops it at once (a leaked secret). A second rotation within the overlap drops
   * the oldest secret at once.
   */
  /**
   * A new signing secret. With `expectedVersion` (If-Match) only at that version: of two clients
   * rotating at once, the second is refused rather than dropping the secret the first was shown.
   */
  async rotateSecret(principal: Principal, id: string, overlapSeconds?: number, expectedVersion?: number): Promise<EndpointRow> {
    const endpoint = await this.get(principal, id);
    const overlapMs = overlapSeconds === undefined ? PREVIOUS_SECRET_GRACE_MS : overlapSeconds * 1_000;
    const previous = overlapMs > 0 ? { previousSecret: endpoint.secret, previousSecretExpiresAt: new Date(this.clock().getTime() + overlapMs) } : { previousSecret: null, previousSecretExpiresAt: null };
    return updateAtVersion('webhook endpoint', endpoint.version, expectedVersion, (version) => this.webhooks.updateEndpoint(endpoint.id, { secret: newSigningSecret(), ...previous }, version));
  }

  async listDeliveries(principal: Principal, endpointId: string, query: ListDeliveriesQuery): Promise<ListEnvelope<DeliveryWithAttempts>> {
    const endpoint = await this.get(principal, endpointId);
    const { sort: sortParam, status, ...paging } = query;
    const sort = parseSort(sortParam, endpointSortFields, { field: 'createdAt', direction: 'desc' });
    const request = toPageRequest(paging, { list: `webhook-deliveries:${endpoint.id}`, sort, filters: { status }, secret: this.settings.cursorSecret });
    const { rows, total } = await this.webhooks.listDeliveries(endpoint.id, status, request);
    return toListEnvelope(rows, request, { secret: this.settings.cursorSecret, sortValue: (row) => row.createdAt, totalCount: total });
  }

  /** Sends a delivery again now, whatever its state (succeeded ones too: a receiver lost it), but not beside an attempt under way. */
  async retryDelivery(principal: Principal, endpointId: string, deliveryId: string): Promise<DeliveryWithAttempts> {
    const endpoint = await this.get(principal, endpointId);
    const delivery = await this.webhooks.findDelivery(endpoint.id, deliveryId);
    if (!delivery) throw NotFound.of('Delivery');
    if (endpoint.status !== 'ENABLED') throw new Conflict('CONFLICT', 'The endpoint is disabled: enable it (PATCH status ENABLED) before retrying its deliveries.');
    if (!(await this.webhooks.requeueDelivery(delivery.id, this.clock()))) {
      throw new Conflict('CONFLICT', 'An attempt of this delivery is under way: see its outcome in the delivery log, and retry once it is recorded.');
    }
    this.settings.onDeliveriesDue?.();
    return (await this.webhooks.findDelivery(endpoint.id, delivery.id)) ?? delivery;
  }

  /** Events about the caller's resources (every event for an admin), newest first. */
  async listEvents(principal: Principal, query: ListEventsQuery): Promise<ListEnvelope<EventRow>> {
    const { sort: sortParam, type, resource, ...paging } = query;
    const sort = parseSort(sortParam, eventSortFields, { field: 'time', direction: 'desc' });
    // The filters as applied, the owner included, scope the cursor: another caller's cursor is a 400.
    const filters = { ownerId: isAdmin(principal) ? undefined : principal.userId, types: type, subject: resource };
    const request = toPageRequest(paging, { list: 'events', sort, filters, secret: this.settings.cursorSecret });
    const { rows, total } = await this.webhooks.listEvents(filters, request);
    return toListEnvelope(rows, request, { secret: this.settings.cursorSecret, sortValue: (row) => row.occurredAt, totalCount: total });
  }

  private checkScope(principal: Principal, scope: 'OWN' | 'ALL'): void {
    if (scope === 'ALL' && !isAdmin(principal)) throw new Forbidden('Only admins may receive every event (scope ALL).');
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await this.guard.pin(url);
    } catch (error) {
      if (error instanceof ForbiddenUrl) throw forbiddenUrl(error);
      throw error;
    }
  }
}
