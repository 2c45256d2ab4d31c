// HTTP in and out for stock levels, behind the gateway's /v1/stock-levels: any signed-in caller
// reads them; an admin sets what is on hand. The rules are the gRPC calls' (StockService). Each
// endpoint is declared once, its handler beside it.
import { defineEndpoints, publicPath } from '@platform/endpoints';
import { ApiError, Invalid } from '@platform/errors';
import { newId } from '@platform/ids';
import { mapListItems, parseSort, toListEnvelope, toPageRequest } from '@platform/paging';
import { ifMatchesAnyExisting, ifMatchesNoneExisting } from '@platform/service-kit';
import { parseParts, writtenKey } from '@platform/validation';
import { etagOf, stockLevelPageRepresentation, stockLevelRepresentation, toStockLevelResponse } from './representation';
import { listStockLevelsQuery, putStockLevelBody, setStockRequest, skuInPath, stockLevelInPath } from './schemas';
import type { StockService } from './service';

/** The use case's names for what a stock-level request sends, in this API's: `skus[0]` is the `sku` parameter. */
function restFieldName(field: string): string {
  return field === 'skus' || field.startsWith('skus[') ? 'sku' : field;
}

/** A refusal of invalid input, naming this API's parameters; any other error as it is. */
function inRestNames(error: unknown): unknown {
  return error instanceof Invalid ? error.withFieldNames(restFieldName) : error;
}

export const stockLevelEndpoints = defineEndpoints('inventory', {
  listStockLevels: {
    method: 'GET', path: '/stock-levels', summary: 'List stock levels in SKU order, or only the SKUs named', access: 'signed-in', scope: 'inventory',
    query: listStockLevelsQuery, sortFields: ['sku'],
    responses: { 200: { description: 'A page of stock levels', body: stockLevelPageRepresentation } },
  },
  getStockLevel: {
    method: 'GET', path: '/stock-levels/:sku', summary: "Read a SKU's stock level", access: 'signed-in', scope: 'inventory',
    params: { sku: stockLevelInPath },
    responses: { 200: { description: 'The stock level', body: stockLevelRepresentation, headers: ['ETag'] } },
  },
  setStockLevel: {
    method: 'PUT', path: '/stock-levels/:sku', summary: 'Set what is on hand (admin); creates the SKU when new (201)', access: 'admin', scope: 'inventory',
    params: { sku: writtenKey(skuInPath) },
    body: putStockLevelBody, ifMatch: true, idempotencyKey: true, conflicts: ['CONFLICT'],
    responses: {
      200: { description: 'The stock level, replaced', body: stockLevelRepresentation, headers: ['ETag'] },
      201: { description: 'The stock level of a SKU inventory did not know', body: stockLevelRepresentation, headers: ['ETag', 'Location'] },
    },
  },
});

export function stockLevelRoutes(stock: StockService, cursorSecret: string) {
  return stockLevelEndpoints.routes({
    listStockLevels: async ({ query, res }) => {
      const { sku, ...paging } = query;
      const { sort: sortParam, ...pageParams } = paging;
      const sort = parseSort(sortParam, ['sku'] as const, { field: 'sku', direction: 'asc' });
      const page = toPageRequest(pageParams, { list: 'stock-levels', sort, filters: { sku }, secret: cursorSecret });
      const { rows, total } = await stock.levels({ skus: sku }, page).catch((error: unknown) => Promise.reject(inRestNames(error)));
      res.json(mapListItems(toListEnvelope(rows.map((row) => ({ ...row, id: row.sku })), page, { secret: cursorSecret, sortValue: (row) => row.sku, totalCount: total }), toStockLevelResponse));
    },
    getStockLevel: async ({ params, res }) => {
      const row = await stock.level(params.sku);
      res.setHeader('ETag', etagOf(row)).json(toStockLevelResponse(row));
    },
    setStockLevel: async ({ params, body, expectedVersion, req, res }) => {
      const { sku } = params;
      // If-Match: * replaces a level that exists and never creates one: 412 for a SKU inventory
      // does not know. Levels are never deleted, so one found here is still there for the write.
      if (ifMatchesAnyExisting(req) && !(await stock.hasLevel(sku))) throw ApiError.preconditionFailed();
      // A retried PUT with the same Idempotency-Key applies once; without one, setting the same
      // count twice is harmless (PUT is idempotent by itself).
      const requestId = (req.headers['idempotency-key'] as string | undefined) ?? newId();
      // The path, body and headers together are SetStock's message: checked by the rule gRPC's SetStock is.
      // If-None-Match: * creates the SKU and never replaces a level: decided by the write itself, so
      // of two create-only PUTs of a new SKU racing, one creates it and the other is 412.
      const createOnly = ifMatchesNoneExisting(req) || undefined;
      const change = parseParts(setStockRequest, { sku, onHand: body.onHand, requestId, expectedVersion, createOnly }, { requestId: 'Idempotency-Key', expectedVersion: 'If-Match' });
      const { row, created } = await stock.putOnHand(change).catch((error: unknown) => Promise.reject(inRestNames(error)));
      if (created) res.status(201).location(publicPath('stock-levels', sku));
      res.setHeader('ETag', etagOf(row)).json(toStockLevelResponse(row));
    },
  });
}
