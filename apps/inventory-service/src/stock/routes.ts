// HTTP in and out for stock levels, behind the gateway's /v1/stock-levels: any signed-in caller
// reads them; an admin sets what is on hand. The rules are the gRPC calls' (StockService).
import { Router } from 'express';
import { adminOnly } from '@platform/auth';
import { ApiError, methodNotAllowed } from '@platform/errors';
import { newId } from '@platform/ids';
import { mapListItems, parseSort, toListEnvelope, toPageRequest } from '@platform/paging';
import { expectedVersion } from '@platform/service-kit';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import { etagOf, toStockLevelResponse } from './representation';
import { listStockLevelsQuery, putStockLevelBody } from './schemas';
import { InventoryError, type StockService } from './service';

/** A refusal of the stock rules, as the HTTP error format says it. */
function asApiError(error: unknown, sku: string): unknown {
  if (!(error instanceof InventoryError)) return error;
  switch (error.code) {
    case 'NOT_FOUND':
      return ApiError.notFound(`Stock level for SKU ${sku}`);
    case 'ABORTED':
      return ApiError.preconditionFailed();
    case 'FAILED_PRECONDITION':
      return new ApiError('CONFLICT', error.message);
    case 'INVALID_ARGUMENT': {
      // The request_id of a PUT is its Idempotency-Key; everything else a PUT sends is checked by its schema.
      const field = /request_id/.test(error.message) ? 'Idempotency-Key' : 'sku';
      return ApiError.unprocessable(error.message.replaceAll('request_id', 'Idempotency-Key'), [{ field, code: 'INVALID_FORMAT', message: error.message }]);
    }
  }
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
      const { rows, total } = await stock.levels({ skus: sku }, page).catch((error: unknown) => Promise.reject(asApiError(error, sku?.join(',') ?? '')));
      res.json(mapListItems(toListEnvelope(rows.map((row) => ({ ...row, id: row.sku })), page, { secret: cursorSecret, sortValue: (row) => row.sku, totalCount: total }), toStockLevelResponse));
    })
    .all(methodNotAllowed);

  router
    .route('/stock-levels/:sku')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      const sku = req.params.sku as string;
      // A SKU that could not be stored cannot exist: 404, as for any malformed id.
      const row = await stock.level(sku).catch((error: unknown) => Promise.reject(error instanceof InventoryError ? ApiError.notFound(`Stock level for SKU ${sku}`) : error));
      res.setHeader('ETag', etagOf(row)).json(toStockLevelResponse(row));
    })
    .put(adminOnly, async (req, res) => {
      const sku = req.params.sku as string;
      const { onHand } = parseBody(putStockLevelBody, req.body);
      // A retried PUT with the same Idempotency-Key applies once; without one, setting the same
      // count twice is harmless (PUT is idempotent by itself).
      const requestId = (req.headers['idempotency-key'] as string | undefined) ?? newId();
      const { row, created } = await stock.putOnHand({ sku, onHand, requestId, expectedVersion: expectedVersion(req) }).catch((error: unknown) => Promise.reject(asApiError(error, sku)));
      if (created) res.status(201).location(`/v1/stock-levels/${encodeURIComponent(sku)}`);
      res.setHeader('ETag', etagOf(row)).json(toStockLevelResponse(row));
    })
    .all(methodNotAllowed);

  return router;
}
