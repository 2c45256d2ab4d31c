// The public shape of a stock level (REST). on_hand is available plus reserved.
import { z } from '@platform/validation';
import type { StockLevelRow } from './repository';

export const stockLevelRepresentation = z.object({
  sku: z.string(),
  onHand: z.number().int().min(0).meta({ description: 'Units in the warehouse: available plus reserved.' }),
  reserved: z.number().int().min(0).meta({ description: 'Held by orders not yet shipped or released.' }),
  available: z.number().int().min(0).meta({ description: 'Free to order.' }),
  updatedAt: z.iso.datetime(),
});

export type StockLevelResponse = z.infer<typeof stockLevelRepresentation>;

export function toStockLevelResponse(row: StockLevelRow): StockLevelResponse {
  return { sku: row.sku, onHand: row.available + row.reserved, reserved: row.reserved, available: row.available, updatedAt: row.updatedAt.toISOString() };
}

export function etagOf(row: StockLevelRow): string {
  return `"${row.version}"`;
}
