// What a REST client may send about stock levels (the gateway's /v1/stock-levels).
import { pagingQueryShape } from '@platform/paging';
import { int32, z } from '@platform/validation';

/** A SKU as the stock table and the gRPC calls take it: at most 64 characters, no control characters. */
const sku = z
  .string()
  .max(64)
  // eslint-disable-next-line no-control-regex
  .refine((text) => !/[\u0000-\u001f\u007f]/.test(text), { message: 'must not contain control characters', params: { code: 'INVALID_FORMAT' } });

/** The most a warehouse can hold of one SKU (SetStock's limit too). */
const MAX_ON_HAND = 1_000_000_000;

export const listStockLevelsQuery = z.strictObject({
  ...pagingQueryShape,
  /** Only these SKUs: comma-separated, up to 100. */
  sku: z
    .string()
    .transform((text) => text.split(',').map((sku) => sku.trim()).filter(Boolean))
    .pipe(z.array(sku).min(1).max(100))
    .optional(),
});

export const putStockLevelBody = z.strictObject({
  onHand: int32({ min: 0, max: MAX_ON_HAND }).meta({ description: 'Units in the warehouse, reserved ones included; available becomes onHand less what orders hold.' }),
});

export type ListStockLevelsQuery = z.output<typeof listStockLevelsQuery>;
