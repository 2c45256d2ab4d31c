// The shapes of a stock level callers see (gRPC and REST). on_hand is available plus reserved.
import { component } from '@platform/endpoints';
import { listEnvelopeSchema } from '@platform/paging';
import { z } from '@platform/validation';
import type { StockLevelRow } from './repository';

export const stockLevelRepresentation = component('StockLevel', z.object({
  sku: z.string(),
  onHand: z.number().int().min(0).meta({ description: 'Units in the warehouse: available plus reserved.' }),
  reserved: z.number().int().min(0).meta({ description: 'Held by orders not yet shipped or released.' }),
  available: z.number().int().min(0).meta({ description: 'Free to order.' }),
  updatedAt: z.iso.datetime(),
}));

export const stockLevelPageRepresentation = component('StockLevelPage', listEnvelopeSchema(stockLevelRepresentation));

export type StockLevelResponse = z.infer<typeof stockLevelRepresentation>;

/** A stock level as the gRPC API and the service's callers see it. */
export interface StockLevel {
  sku: string;
  onHand: number;
  reserved: number;
  available: number;
}

/** The one place a row becomes a level: the table keeps available and reserved; on hand is their sum. */
export function toStockLevel(row: Pick<StockLevelRow, 'sku' | 'available' | 'reserved'>): StockLevel {
  return { sku: row.sku, onHand: row.available + row.reserved, reserved: row.reserved, available: row.available };
}

export function toStockLevelResponse(row: StockLevelRow): StockLevelResponse {
  return { ...toStockLevel(row), updatedAt: row.updatedAt.toISOString() };
}

export function etagOf(row: StockLevelRow): string {
  return `"${row.version}"`;
}
