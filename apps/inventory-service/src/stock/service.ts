// Rules of stock: what each change does and what each outcome means. Requests arrive checked
// (schemas.ts, by the gRPC handlers and the REST routes alike); what is refused here is refused for
// the state it meets, never for its shape.
import { demoProducts } from '@platform/catalog-data';
import { Conflict, Invalid, NotFound, OutOfStock, VersionMismatch } from '@platform/errors';
import { newId } from '@platform/ids';
import { isDeadlock, isUniqueViolation } from '@platform/db';
import type { PageRequest } from '@platform/paging';
import type { AppliedStockChange, ReserveOrderOutcome, StockChangeOutcome, StockChangeRequest, StockLevelRow, StockRepository } from './repository';
import { type StockLevel, toStockLevel } from './representation';
import { ReserveBatcher } from './reserve-batcher';
import { MAX_ON_HAND, type AdjustStockRequest, type ReserveOrderRequest, type ReserveRequest, type SetStockRequest } from './schemas';
import type { StockWatch } from './watch';

export interface Reservation {
  reservationId: string;
  sku: string;
  quantity: number;
  remaining: number;
}

/** A ReserveOrder that lost a race (same order on another call, or a deadlock) runs again, this many times at most. */
const MAX_ATTEMPTS = 3;

/** The name of a change's request id in the caller's words: gRPC's field, or what a REST client sent it as. */
type RequestIdName = 'request_id' | 'Idempotency-Key';

/** SetStock as the repository's change: on hand set to `onHand`. */
function setChangeOf(request: SetStockRequest): StockChangeRequest {
  return { requestId: request.requestId, sku: request.sku, kind: 'SET', amount: request.onHand, reason: null, expectedVersion: request.expectedVersion, createOnly: request.createOnly };
}

export class StockService {
  private readonly batcher: ReserveBatcher;

  constructor(
    private readonly stock: StockRepository,
    private readonly watcher?: StockWatch,
  ) {
    this.batcher = new ReserveBatcher(stock);
  }

  async reserve(request: ReserveRequest): Promise<Reservation> {
    const outcome = await this.batcher.reserve(request.sku, { id: newId(), orderId: request.orderId, quantity: request.quantity });
    switch (outcome.kind) {
      case 'reserved':
      case 'existing':
        return { reservationId: outcome.reservationId, sku: request.sku, quantity: outcome.quantity, remaining: outcome.remaining };
      case 'unknown-sku':
        throw new NotFound(`Unknown SKU ${request.sku}.`, [request.sku]);
      case 'insufficient':
        throw new OutOfStock(`OUT_OF_STOCK: ${request.sku} has ${outcome.available} available, ${request.quantity} requested.`, [request.sku]);
    }
  }

  /** Every line of one order, or none, in place of another's when it names one (see the repository for how). */
  async reserveOrder({ lines }: ReserveOrderRequest): Promise<{ orderId: string; reservations: Reservation[] }> {
    const { orderId, replacesOrderId } = lines[0];
    const rows = lines.map((line) => ({ id: newId(), sku: line.sku, quantity: line.quantity }));
    let outcome: ReserveOrderOutcome;
    for (let attempt = 1; ; attempt++) {
      try {
        outcome = await this.stock.reserveOrder(orderId, rows, replacesOrderId);
        break;
      } catch (error) {
        if (!(isUniqueViolation(error) || isDeadlock(error)) || attempt >= MAX_ATTEMPTS) throw error;
      }
    }
    switch (outcome.kind) {
      case 'reserved':
        return { orderId, reservations: outcome.lines };
      case 'unknown-skus':
        throw new NotFound(`Unknown SKU ${outcome.skus.join(', ')}; nothing was reserved.`, outcome.skus);
      case 'insufficient':
        throw new OutOfStock(
          `OUT_OF_STOCK: ${outcome.lines.map((line) => `${line.sku} has ${line.available} available, ${line.requested} requested`).join('; ')}; nothing was reserved.`,
          outcome.lines.map((line) => line.sku),
        );
      case 'replaced-not-held':
        throw new Conflict('CONFLICT', `${replacesOrderId} no longer holds its reservations (another change replaced or ended them); nothing was reserved.`);
    }
  }

  /** The levels of the known SKUs of `skus`, in the order asked. */
  async getStock(skus: readonly string[]): Promise<StockLevel[]> {
    const found = new Map((await this.stock.findLevels(skus)).map((row) => [row.sku, toStockLevel(row)]));
    return skus.flatMap((sku) => (found.has(sku) ? [found.get(sku)!] : []));
  }

  setStock(request: SetStockRequest, requestIdName: RequestIdName = 'request_id'): Promise<StockLevel> {
    return this.change(setChangeOf(request), requestIdName);
  }

  adjustStock(request: AdjustStockRequest): Promise<StockLevel> {
    return this.change({ requestId: request.requestId, sku: request.sku, kind: 'ADJUST', amount: request.delta, reason: request.reason || null }, 'request_id');
  }

  private async change(request: StockChangeRequest, requestIdName: RequestIdName): Promise<StockLevel> {
    return toStockLevel((await this.applied(request, requestIdName)).level);
  }

  /** The change applied (or the earlier application of its request id), or the refusal of what it met. */
  private async applied(request: StockChangeRequest, requestIdName: RequestIdName): Promise<AppliedStockChange> {
    const outcome: StockChangeOutcome = await this.stock.applyChange(request, MAX_ON_HAND);
    switch (outcome.kind) {
      case 'applied':
      case 'repeat':
        return outcome;
      case 'request-id-reused':
        throw new Invalid(`${requestIdName} ${request.requestId} was already used for another change.`, [
          { field: requestIdName, code: 'INVALID_FORMAT', message: `${requestIdName} ${request.requestId} was already used for another change.` },
        ]);
      case 'unknown-sku':
        throw new NotFound(`Unknown SKU ${request.sku}.`, [request.sku]);
      case 'version-mismatch':
        throw new VersionMismatch();
      case 'exists':
        throw new VersionMismatch(`If-None-Match: * sets only a SKU inventory does not know; ${request.sku} has a stock level.`);
      case 'out-of-bounds':
        if (request.kind === 'SET') throw new Conflict('CONFLICT', `${request.sku} has ${outcome.reserved} reserved; on_hand cannot be set below that.`);
        if (request.amount < 0) throw new Conflict('CONFLICT', `${request.sku} has ${outcome.available} available; ${-request.amount} cannot be taken.`);
        throw new Conflict('CONFLICT', `${request.sku} would have more than ${MAX_ON_HAND} on hand.`);
    }
  }

  /** Whether inventory knows the SKU (has a stock level for it). */
  async hasLevel(sku: string): Promise<boolean> {
    return (await this.stock.findLevels([sku])).length > 0;
  }

  /** One SKU's stock as stored (with its version and last change): NotFound when inventory does not know it. `sku` comes checked (GET /stock-levels/{sku}'s route, SetStock's schema). */
  async level(sku: string): Promise<StockLevelRow> {
    const [row] = await this.stock.findLevels([sku]);
    if (!row) throw NotFound.of(`Stock level for SKU ${sku}`, [sku]);
    return row;
  }

  /** A page of stock levels in SKU order, all of them or only `skus`. */
  async levels(filter: { skus?: readonly string[] }, page: PageRequest): Promise<{ rows: StockLevelRow[]; total?: number }> {
    return this.stock.listLevels(filter, page);
  }

  /**
   * What an operator counted: sets on hand for `sku`, creating it when new (SetStock's rules and
   * idempotency; its request id is the client's Idempotency-Key). With `expectedVersion` (If-Match)
   * only a row still at that version changes: VersionMismatch otherwise, and for a SKU that does not exist.
   */
  async putOnHand(request: SetStockRequest): Promise<{ row: StockLevelRow; created: boolean }> {
    // Whether the SKU is new is what the write found (kept with the change for a replay), not a
    // read before it: two first PUTs racing cannot both say created, and a retry answers as the first did.
    // The level is the one the change left (a replay's too, as its first answer gave it), not one read after.
    const { created, row } = await this.applied(setChangeOf(request), 'Idempotency-Key');
    return { row: row ?? (await this.level(request.sku)), created };
  }

  /** See StockWatch.watch. */
  watch(skus: readonly string[], send: (level: StockLevel) => void, end: () => void): Promise<() => void> {
    if (!this.watcher) throw new Error('this StockService has no StockWatch');
    return this.watcher.watch(skus, { send: (row) => send(toStockLevel(row)), end });
  }

  async release(orderId: string): Promise<number> {
    return this.stock.release(orderId);
  }

  /** The order shipped: see StockRepository.fulfil. */
  async fulfil(orderId: string): Promise<number> {
    return this.stock.fulfil(orderId);
  }

  /** Stocks the demo catalog's SKUs (the shared list) into an empty database. */
  seedDemoStock(): Promise<number> {
    return this.stock.seedIfEmpty(demoProducts.map((product) => ({ sku: product.sku, available: product.initialStock })));
  }
}
