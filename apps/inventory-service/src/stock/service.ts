// Rules of stock: what a valid reservation request is and what each outcome means.
import { demoProducts } from '@platform/catalog-data';
import { Conflict, type FieldError, Invalid, NotFound, OutOfStock, VersionMismatch } from '@platform/errors';
import { newId } from '@platform/ids';
import { isDeadlock, isUniqueViolation } from '@platform/db';
import type { PageRequest } from '@platform/paging';
import type { ReserveOrderOutcome, StockChangeOutcome, StockLevelRow, StockRepository } from './repository';
import { type StockLevel, toStockLevel } from './representation';
import { ReserveBatcher } from './reserve-batcher';
import type { StockWatch } from './watch';

export interface Reservation {
  reservationId: string;
  sku: string;
  quantity: number;
  remaining: number;
}

export interface OrderLine {
  orderId: string;
  sku: string;
  quantity: number;
}

const MAX_QUANTITY = 1_000_000;
/** The most a SKU can have on hand: far below the int32 columns' limit. */
export const MAX_ON_HAND = 1_000_000_000;
/** SKUs per GetStock or WatchStock, lines per ReserveOrder. */
export const MAX_SKUS = 100;
export const MAX_LINES = 100;

/** A ReserveOrder of more lines than MAX_LINES (the gRPC door stops reading past them and refuses with this). */
export function tooManyLines(): Invalid {
  return invalid([problem('lines', `an order has at most ${MAX_LINES} lines`)]);
}
const MAX_REQUEST_ID = 100;
const MAX_REASON = 200;
/** A ReserveOrder that lost a race (same order on another call, or a deadlock) runs again, this many times at most. */
const MAX_ATTEMPTS = 3;
/** The columns' widths: longer values would fail in the database, not as the caller's mistake. */
const MAX_ORDER_ID = 100;
const MAX_SKU = 64;

/** One field at fault; every message names its field, as the caller calls it. */
function problem(field: string, message: string): FieldError {
  return { field, code: 'INVALID_FORMAT', message };
}

/** What is wrong with a required text field, if anything: empty, too long, or holding control characters (NUL cannot be stored). */
function textProblem(field: string, value: string, max: number): FieldError | undefined {
  if (!value) return problem(field, `${field} is required`);
  if (value.length > max) return problem(field, `${field} is longer than ${max} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return problem(field, `${field} must not contain control characters`);
  return undefined;
}

/** A refusal naming every problem found at once. */
function invalid(problems: readonly FieldError[]): Invalid {
  return new Invalid(problems.map((found) => found.message).join('; '), problems);
}

/** Refuses the request if any problem was found. */
function refuseInvalid(problems: readonly (FieldError | undefined)[]): void {
  const found = problems.filter((found) => found !== undefined);
  if (found.length) throw invalid(found);
}

function lineProblems(line: OrderLine, prefix = ''): (FieldError | undefined)[] {
  const problems = [textProblem(`${prefix}order_id`, line.orderId, MAX_ORDER_ID), textProblem(`${prefix}sku`, line.sku, MAX_SKU)];
  if (!Number.isInteger(line.quantity) || line.quantity <= 0) problems.push(problem(`${prefix}quantity`, `${prefix}quantity must be a positive integer`));
  else if (line.quantity > MAX_QUANTITY) problems.push(problem(`${prefix}quantity`, `${prefix}quantity must be at most ${MAX_QUANTITY}`));
  return problems;
}

/** The SKUs of a GetStock or WatchStock, each once, in the order asked. */
function skuList(skus: readonly string[]): string[] {
  if (!skus.length) throw invalid([problem('skus', 'skus must name at least one SKU')]);
  const unique = [...new Set(skus)];
  if (unique.length > MAX_SKUS) throw invalid([problem('skus', `skus must name at most ${MAX_SKUS} SKUs`)]);
  refuseInvalid(unique.map((sku, index) => textProblem(`skus[${index}]`, sku, MAX_SKU)));
  return unique;
}

/** The name of a change's request id in the caller's words: gRPC's field, or what a REST client sent it as. */
type RequestIdName = 'request_id' | 'Idempotency-Key';

export class StockService {
  private readonly batcher: ReserveBatcher;

  constructor(
    private readonly stock: StockRepository,
    private readonly watcher?: StockWatch,
  ) {
    this.batcher = new ReserveBatcher(stock);
  }

  async reserve(request: { orderId: string; sku: string; quantity: number }): Promise<Reservation> {
    refuseInvalid(lineProblems(request));

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

  /** Every line of one order, or none (see the repository for how). */
  async reserveOrder(lines: readonly OrderLine[]): Promise<{ orderId: string; reservations: Reservation[] }> {
    if (!lines.length) throw invalid([problem('lines', 'an order needs at least one line')]);
    if (lines.length > MAX_LINES) throw tooManyLines();
    const problems = lines.flatMap((line, index) => lineProblems(line, `lines[${index}].`));
    const orderId = lines[0].orderId;
    if (lines.some((line) => line.orderId !== orderId)) problems.push(problem('order_id', 'every line must name the same order_id'));
    const seen = new Set<string>();
    for (const [index, line] of lines.entries()) {
      if (seen.has(line.sku)) problems.push(problem(`lines[${index}].sku`, `lines[${index}].sku ${line.sku} is already on another line`));
      seen.add(line.sku);
    }
    refuseInvalid(problems);

    const rows = lines.map((line) => ({ id: newId(), sku: line.sku, quantity: line.quantity }));
    let outcome: ReserveOrderOutcome;
    for (let attempt = 1; ; attempt++) {
      try {
        outcome = await this.stock.reserveOrder(orderId, rows);
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
    }
  }

  /** The levels of the known SKUs of `skus`, in the order asked. */
  async getStock(skus: readonly string[]): Promise<StockLevel[]> {
    const wanted = skuList(skus);
    const found = new Map((await this.stock.findLevels(wanted)).map((row) => [row.sku, toStockLevel(row)]));
    return wanted.flatMap((sku) => (found.has(sku) ? [found.get(sku)!] : []));
  }

  setStock(request: { sku: string; onHand: number; requestId: string; expectedVersion?: number }, requestIdName: RequestIdName = 'request_id'): Promise<StockLevel> {
    const problems = [textProblem('sku', request.sku, MAX_SKU), textProblem(requestIdName, request.requestId, MAX_REQUEST_ID)];
    if (!Number.isInteger(request.onHand) || request.onHand < 0 || request.onHand > MAX_ON_HAND) problems.push(problem('on_hand', `on_hand must be an integer from 0 to ${MAX_ON_HAND}`));
    refuseInvalid(problems);
    return this.change({ requestId: request.requestId, sku: request.sku, kind: 'SET', amount: request.onHand, reason: null, expectedVersion: request.expectedVersion }, requestIdName);
  }

  adjustStock(request: { sku: string; delta: number; reason: string; requestId: string }): Promise<StockLevel> {
    const problems = [textProblem('sku', request.sku, MAX_SKU), textProblem('request_id', request.requestId, MAX_REQUEST_ID)];
    if (request.reason) problems.push(textProblem('reason', request.reason, MAX_REASON));
    if (!Number.isInteger(request.delta) || request.delta === 0 || Math.abs(request.delta) > MAX_ON_HAND) problems.push(problem('delta', `delta must be a non-zero integer from -${MAX_ON_HAND} to ${MAX_ON_HAND}`));
    refuseInvalid(problems);
    return this.change({ requestId: request.requestId, sku: request.sku, kind: 'ADJUST', amount: request.delta, reason: request.reason || null }, 'request_id');
  }

  private async change(request: Parameters<StockRepository['applyChange']>[0], requestIdName: RequestIdName): Promise<StockLevel> {
    const outcome: StockChangeOutcome = await this.stock.applyChange(request, MAX_ON_HAND);
    switch (outcome.kind) {
      case 'applied':
      case 'repeat':
        return toStockLevel(outcome.level);
      case 'request-id-reused':
        throw invalid([problem(requestIdName, `${requestIdName} ${request.requestId} was already used for another change.`)]);
      case 'unknown-sku':
        throw new NotFound(`Unknown SKU ${request.sku}.`, [request.sku]);
      case 'version-mismatch':
        throw new VersionMismatch();
      case 'out-of-bounds':
        if (request.kind === 'SET') throw new Conflict('CONFLICT', `${request.sku} has ${outcome.reserved} reserved; on_hand cannot be set below that.`);
        if (request.amount < 0) throw new Conflict('CONFLICT', `${request.sku} has ${outcome.available} available; ${-request.amount} cannot be taken.`);
        throw new Conflict('CONFLICT', `${request.sku} would have more than ${MAX_ON_HAND} on hand.`);
    }
  }

  /** One SKU's stock as stored (with its version and last change); NotFound when inventory does not know it. */
  async level(sku: string): Promise<StockLevelRow> {
    const notFound = NotFound.of(`Stock level for SKU ${sku}`, [sku]);
    // A SKU that could not be stored cannot exist: not found, as for any malformed id.
    if (textProblem('sku', sku, MAX_SKU)) throw notFound;
    const [row] = await this.stock.findLevels([sku]);
    if (!row) throw notFound;
    return row;
  }

  /** A page of stock levels in SKU order, all of them or only `skus`. */
  async levels(filter: { skus?: readonly string[] }, page: PageRequest): Promise<{ rows: StockLevelRow[]; total?: number }> {
    return this.stock.listLevels({ skus: filter.skus && skuList(filter.skus) }, page);
  }

  /**
   * What an operator counted: sets on hand for `sku`, creating it when new (SetStock's rules and
   * idempotency; its request id is the client's Idempotency-Key). With `expectedVersion` (If-Match)
   * only a row still at that version changes: VersionMismatch otherwise, and for a SKU that does not exist.
   */
  async putOnHand(request: { sku: string; onHand: number; requestId: string; expectedVersion?: number }): Promise<{ row: StockLevelRow; created: boolean }> {
    const existed = (await this.stock.findLevels(skuList([request.sku]))).length > 0;
    await this.setStock(request, 'Idempotency-Key');
    return { row: await this.level(request.sku), created: !existed };
  }

  /** See StockWatch.watch; `skus` are checked as GetStock's. */
  watch(skus: readonly string[], send: (level: StockLevel) => void, end: () => void): Promise<() => void> {
    if (!this.watcher) throw new Error('this StockService has no StockWatch');
    return this.watcher.watch(skuList(skus), { send: (row) => send(toStockLevel(row)), end });
  }

  async release(orderId: string): Promise<number> {
    refuseInvalid([textProblem('order_id', orderId, MAX_ORDER_ID)]);
    return this.stock.release(orderId);
  }

  /** Stocks the demo catalog's SKUs (the shared list) into an empty database. */
  seedDemoStock(): Promise<number> {
    return this.stock.seedIfEmpty(demoProducts.map((product) => ({ sku: product.sku, available: product.initialStock })));
  }
}
