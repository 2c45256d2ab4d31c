// HTTP in and out for products and their rating.
import { Router } from 'express';
import { adminOnly, principalOf } from '@platform/auth';
import { methodNotAllowed } from '@platform/errors';
import { mapListItems, pageHeaders } from '@platform/paging';
import { expectedVersion } from '@platform/service-kit';
import { noQueryParameters, parseBody, parseQuery } from '@platform/validation';
import { etagOf, toProductResponse, toRatingResponse } from './representation';
import { createProductBody, listProductsQuery, patchProductBody, replaceProductBody } from './schemas';
import type { ProductService } from './service';

export function productsRoutes(products: ProductService): Router {
  const router = Router();

  router
    .route('/products')
    .get(async (req, res) => {
      const page = await products.list(parseQuery(listProductsQuery, req.query));
      res.set(pageHeaders(page)).json(mapListItems(page, toProductResponse));
    })
    .post(adminOnly, async (req, res) => {
      const product = await products.create(principalOf(res), parseBody(createProductBody, req.body));
      res.status(201).location(`/v1/products/${product.id}`).setHeader('ETag', etagOf(product)).json(toProductResponse(product));
    })
    .all(methodNotAllowed);

  router
    .route('/products/:id')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      const product = await products.get(req.params.id as string);
      res.setHeader('ETag', etagOf(product)).json(toProductResponse(product));
    })
    .patch(adminOnly, async (req, res) => {
      const product = await products.patch(principalOf(res), req.params.id as string, parseBody(patchProductBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(product)).json(toProductResponse(product));
    })
    .put(adminOnly, async (req, res) => {
      const product = await products.replace(principalOf(res), req.params.id as string, parseBody(replaceProductBody, req.body), expectedVersion(req));
      res.setHeader('ETag', etagOf(product)).json(toProductResponse(product));
    })
    .delete(adminOnly, async (req, res) => {
      await products.delete(principalOf(res), req.params.id as string);
      res.status(204).end();
    })
    .all(methodNotAllowed);

  router
    .route('/products/:id/rating')
    .get(async (req, res) => {
      parseQuery(noQueryParameters, req.query);
      res.json(toRatingResponse(await products.get(req.params.id as string)));
    })
    .all(methodNotAllowed);

  return router;
}
