// What a caller may send about stock, one schema per message, for both doors: the gRPC handlers
// check each request with these (`parseMessage`: fields named as the .proto names them,
// `lines[0].order_id`), and the REST routes check theirs with the same (the gateway's
// /v1/stock-levels: `parseQuery`, `parseParts`). The use cases receive what passed and check
// nothing again.
import { pagingQueryShape } from '@platform/paging';
import { NotFound } from '@platform/errors';
import { commaSeparated, int32, MAX_SKU_LENGTH, plainText, resourceKey, skuField, z } from '@platform/validation';

/** The most a SKU can have on hand (SetStock's limit, PUT's too): far below the int32 columns' limit. */
export const MAX_ON_HAND = 1_000_000_000;
/** The most one reservation may hold. */
const MAX_QUANTITY = 1_000_000;
/** SKUs per GetStock, WatchStock or list of stock levels. */
const MAX_SKUS = 100;
/** Lines per ReserveOrder (the gRPC door stops keeping lines past one more than this). */
export const MAX_LINES = 100;
/** The columns' widths: longer values would fail in the database, not as the caller's mistake. */
const MAX_ORDER_ID = 100;
const MAX_REQUEST_ID = 100;
const MAX_REASON = 200;

const sku = skuField();
const orderId = plainText({ min: 1, max: MAX_ORDER_ID });
/** Chosen by the caller, unique per change; a retry sends the same one (REST: the Idempotency-Key). */
const requestId = plainText({ min: 1, max: MAX_REQUEST_ID });
const quantity = int32({ min: 1, max: MAX_QUANTITY });
const onHand = int32({ min: 0, max: MAX_ON_HAND });

/** SKUs asked about: each once, in the order asked (repeats are dropped before they are counted). */
const skuList = z
  .array(z.string())
  .transform((skus) => [...new Set(skus)])
  .pipe(z.array(sku).min(1).max(MAX_SKUS));

export const reserveRequest = z.object({ orderId, sku, quantity });

/** The lines of one order, reserved all or none: one order, each SKU once. */
export const reserveOrderRequest = z
  .object({
    lines: z
      .array(
        z.object({
          orderId,
          sku,
          quantity,
          // proto3 sends '' for a field not set: no order replaced.
          replacesOrderId: z.literal('').or(orderId).optional().transform((value) => value || undefined),
        }),
      )
      .min(1)
      .max(MAX_LINES),
  })
  .superRefine(({ lines }, context) => {
    if (lines.some((line) => line.orderId !== lines[0].orderId)) {
      context.addIssue({ code: 'custom', path: ['orderId'], message: 'must be the same on every line', params: { code: 'NOT_ALLOWED' } });
    }
    if (lines.some((line) => line.replacesOrderId !== lines[0].replacesOrderId)) {
      context.addIssue({ code: 'custom', path: ['replacesOrderId'], message: 'must be the same on every line', params: { code: 'NOT_ALLOWED' } });
    }
    if (lines.length && lines[0].replacesOrderId === lines[0].orderId) {
      context.addIssue({ code: 'custom', path: ['replacesOrderId'], message: 'must name another order', params: { code: 'NOT_ALLOWED' } });
    }
    const seen = new Set<string>();
    for (const [index, line] of lines.entries()) {
      if (seen.has(line.sku)) context.addIssue({ code: 'custom', path: ['lines', index, 'sku'], message: 'is already on another line', params: { code: 'NOT_ALLOWED' } });
      seen.add(line.sku);
    }
  });

export const releaseRequest = z.object({ orderId });

/** Fulfil names its order as Release does. */
export const fulfilRequest = releaseRequest;

export const getStockRequest = z.object({ skus: skuList });

/** WatchStock names its SKUs as GetStock does. */
export const watchStockRequest = getStockRequest;

/** SetStock; PUT /stock-levels/{sku} sends the same change (its request id is the Idempotency-Key, its expected version the If-Match). */
export const setStockRequest = z.object({ sku, onHand, requestId, expectedVersion: z.number().int().optional(), createOnly: z.boolean().optional() });

export const adjustStockRequest = z.object({
  sku,
  delta: int32({ min: -MAX_ON_HAND, max: MAX_ON_HAND }).refine((delta) => delta !== 0, { message: 'must not be 0', params: { code: 'OUT_OF_RANGE' } }),
  /** Empty when the caller gives none. */
  reason: plainText({ max: MAX_REASON }),
  requestId,
});

export const listStockLevelsQuery = z.strictObject({
  ...pagingQueryShape,
  /** Only these SKUs: comma-separated, up to 100. */
  sku: commaSeparated(skuList).optional(),
});

export const putStockLevelBody = z.strictObject({
  onHand: onHand.meta({ description: 'Units in the warehouse, reserved ones included; available becomes onHand less what orders hold.' }),
});

export type ListStockLevelsQuery = z.output<typeof listStockLevelsQuery>;
export type ReserveRequest = z.output<typeof reserveRequest>;
export type ReserveOrderRequest = z.output<typeof reserveOrderRequest>;
export type SetStockRequest = z.output<typeof setStockRequest>;
export type AdjustStockRequest = z.output<typeof adjustStockRequest>;

/**
 * The SKU in /stock-levels/{sku}. Its length is counted by a refinement JSON Schema cannot show,
 * so the bound is stated for the document.
 */
export const skuInPath = skuField().meta({ maxLength: MAX_SKU_LENGTH });

/** GET /stock-levels/{sku}: a SKU no column can hold names no stock level, and is answered as an unknown one. */
export const stockLevelInPath = resourceKey(skuInPath, (sku) => NotFound.of(`Stock level for SKU ${sku}`, [sku]));
