// HTTP in and out for stock levels, behind the gateway's /v1/stock-levels: any signed-in caller
// reads them; an admin sets what is on hand. The rules are the gRPC calls' (StockService).
import { Router } from 'express';
import { adminOnly } from '@platform/auth';
import { Invalid, methodNotAllowed } from '@platform/errors';
import { newId } from '@platform/ids';
import { mapListItems, parseSort, toListEnvelope, toPageRequest } from '@platform/paging';
import { expectedVersion } from '@platform/service-kit';
import { noQueryParameters, parseBody, parseParts, parseQuery } from '@platform/validation';
import { etagOf, toStockLevelResponse } from './representation';
import { listStockLevelsQuery, putStockLevelBody, setStockRequest } from './schemas';
import type { StockService } from './service';

/** The use case's names for what a stock-level request sends, in this API's: `skus[0]` is the `sku` parameter. */
function restFieldName(field: string): string {
  return field === 'skus' || field.startsWith('skus[') ? 'sku' : field;
}

/** A refusal of invalid input, naming this API's parameters; any other error as it is. */
function inRestNames(error: unknown): unknown {
  return error instanceof Invalid ? error.withFieldNames(restFieldName) : error;
}

export function stockLevelRoutes(stock: StockService, cursorSecret: string): Router {
  const router = Router();

  router
    .route('/stock-levels')
    .get(async (req, res) => {
      const { sku, ...paging } = parseQuery(listStockLevelsQuery, req.query);
      const { sort: sortParam, ...pageParams } = paging;
      const sort = parseSort(sortParam, ['sku'] as const, { field: 'sku', direction: 'asc' });
      const page = toPageRequest(pageParams, { list: 'stock-levels', sort, filters: { sku }, secret: cursorSecret });
      const { rows, total } = await stock.levels({ skus: sku }, page).catch((error: unknown) => Promise.reject(inRestNames(error)));
      res.json(mapListItems(toListEnvelope(rows.map((row) => ({ ...row, id: row.sku })), page, { secret: cursorSecret, sortValue: (row) => row.sku, totalCount: total }), toStockLevelResponse));
    })
    .all(methodNotAllowed);

  router
    .route('/stock-levels/:sku')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      const sku = req.params.sku as string;
      const row = await stock.level(sku);
      res.setHeader('ETag', etagOf(row)).json(toStockLevelResponse(row));
    })
    .put(adminOnly, async (req, res) => {
      const sku = req.params.sku as string;
      const { onHand } = parseBody(putStockLevelBody, req.body);
      // A retried PUT with the same Idempotency-Key applies once; without one, setting the same
      // count twice is harmless (PUT is idempotent by itself).
      const requestId = (req.headers['idempotency-key'] as string | undefined) ?? newId();
      const change = parseParts(setStockRequest, { sku, onHand, requestId, expectedVersion: expectedVersion(req) }, { requestId: 'Idempotency-Key', expectedVersion: 'If-Match' });
      const { row, created } = await stock.putOnHand(change).catch((error: unknown) => Promise.reject(inRestNames(error)));
      if (created) res.status(201).location(`/v1/stock-levels/${encodeURIComponent(sku)}`);
      res.setHeader('ETag', etagOf(row)).json(toStockLevelResponse(row));
    })
    .all(methodNotAllowed);

  return router;
}
