// Rules of stock: what a valid reservation request is and what each outcome means.
import { demoProducts } from '@platform/catalog-data';
import { newId } from '@platform/ids';
import type { StockRepository } from './repository';
import { ReserveBatcher } from './reserve-batcher';

export type InventoryErrorCode = 'INVALID_ARGUMENT' | 'NOT_FOUND' | 'FAILED_PRECONDITION';

/** A refusal the caller caused; the gRPC layer turns `code` into the status of the same name. */
export class InventoryError extends Error {
  constructor(
    readonly code: InventoryErrorCode,
    message: string,
    /** Machine-readable reason sent as the status detail prefix (OUT_OF_STOCK). */
    readonly reason?: string,
  ) {
    super(message);
  }
}

export interface Reservation {
  reservationId: string;
  sku: string;
  quantity: number;
  remaining: number;
}

const MAX_QUANTITY = 1_000_000;
/** The columns' widths: longer values would fail in the database, not as the caller's mistake. */
const MAX_ORDER_ID = 100;
const MAX_SKU = 64;

/** What is wrong with a required text field, if anything: empty, too long, or holding control characters (NUL cannot be stored). */
function textProblem(field: string, value: string, max: number): string | undefined {
  if (!value) return `${field} is required`;
  if (value.length > max) return `${field} is longer than ${max} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) return `${field} must not contain control characters`;
  return undefined;
}

export class StockService {
  private readonly batcher: ReserveBatcher;

  constructor(private readonly stock: StockRepository) {
    this.batcher = new ReserveBatcher(stock);
  }

  async reserve(request: { orderId: string; sku: string; quantity: number }): Promise<Reservation> {
    const problems = [textProblem('order_id', request.orderId, MAX_ORDER_ID), textProblem('sku', request.sku, MAX_SKU)].filter((problem) => problem !== undefined);
    if (!Number.isInteger(request.quantity) || request.quantity <= 0) problems.push('quantity must be a positive integer');
    else if (request.quantity > MAX_QUANTITY) problems.push(`quantity must be at most ${MAX_QUANTITY}`);
    if (problems.length) throw new InventoryError('INVALID_ARGUMENT', problems.join('; '));

    const outcome = await this.batcher.reserve(request.sku, { id: newId(), orderId: request.orderId, quantity: request.quantity });
    switch (outcome.kind) {
      case 'reserved':
      case 'existing':
        return { reservationId: outcome.reservationId, sku: request.sku, quantity: outcome.quantity, remaining: outcome.remaining };
      case 'unknown-sku':
        throw new InventoryError('NOT_FOUND', `Unknown SKU ${request.sku}.`);
      case 'insufficient':
        throw new InventoryError('FAILED_PRECONDITION', `OUT_OF_STOCK: ${request.sku} has ${outcome.available} available, ${request.quantity} requested.`, 'OUT_OF_STOCK');
    }
  }

  async release(orderId: string): Promise<number> {
    const problem = textProblem('order_id', orderId, MAX_ORDER_ID);
    if (problem) throw new InventoryError('INVALID_ARGUMENT', problem);
    return this.stock.release(orderId);
  }

  /** Stocks the demo catalog's SKUs (the shared list) into an empty database. */
  seedDemoStock(): Promise<number> {
    return this.stock.seedIfEmpty(demoProducts.map((product) => ({ sku: product.sku, available: product.initialStock })));
  }
}
