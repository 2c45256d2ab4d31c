// HTTP in and out for products and their rating: each endpoint declared once (what it takes,
// answers, who may call it), its handler beside it.
import { defineEndpoints, publicPath } from '@platform/endpoints';
import { mapListItems, pageHeaders } from '@platform/paging';
import { etagOf, productPageRepresentation, productRepresentation, ratingRepresentation, toProductResponse, toRatingResponse } from './representation';
import { createProductBody, listProductsQuery, patchProductBody, productInPath, productSortFields, replaceProductBody } from './schemas';
import type { ProductService } from './service';

export const productEndpoints = defineEndpoints('catalog', {
  listProducts: {
    method: 'GET', path: '/products', summary: 'List products', access: 'signed-in', scope: 'products',
    query: listProductsQuery, sortFields: productSortFields,
    responses: { 200: { description: 'A page of products', body: productPageRepresentation } },
  },
  createProduct: {
    method: 'POST', path: '/products', summary: 'Create a product (admin)', access: 'admin', scope: 'products',
    body: createProductBody, conflicts: ['SKU_TAKEN'],
    responses: { 201: { description: 'The product', body: productRepresentation, headers: ['Location', 'ETag'] } },
  },
  getProduct: {
    method: 'GET', path: '/products/:id', summary: 'Read a product', access: 'signed-in', scope: 'products',
    params: { id: productInPath },
    responses: { 200: { description: 'The product', body: productRepresentation, headers: ['ETag'] } },
  },
  updateProduct: {
    method: 'PATCH', path: '/products/:id', summary: 'Change a product (admin)', access: 'admin', scope: 'products',
    params: { id: productInPath },
    body: patchProductBody, ifMatch: true, conflicts: ['SKU_TAKEN', 'CONFLICT'],
    responses: { 200: { description: 'The product', body: productRepresentation, headers: ['ETag'] } },
  },
  replaceProduct: {
    method: 'PUT', path: '/products/:id', summary: 'Replace a product (admin)', access: 'admin', scope: 'products',
    params: { id: productInPath },
    body: replaceProductBody, ifMatch: true, conflicts: ['SKU_TAKEN', 'CONFLICT'],
    responses: { 200: { description: 'The product', body: productRepresentation, headers: ['ETag'] } },
  },
  deleteProduct: {
    method: 'DELETE', path: '/products/:id', summary: 'Delete a product (admin)', access: 'admin', scope: 'products',
    params: { id: productInPath }, ifMatch: true,
    responses: { 204: { description: 'Deleted' } },
  },
  getProductRating: {
    method: 'GET', path: '/products/:id/rating', summary: "Read a product's rating", access: 'signed-in', scope: 'products',
    params: { id: productInPath },
    responses: { 200: { description: 'The rating', body: ratingRepresentation } },
  },
});

export function productsRoutes(products: ProductService) {
  return productEndpoints.routes({
    listProducts: async ({ query, res }) => {
      const page = await products.list(query);
      res.set(pageHeaders(page)).json(mapListItems(page, toProductResponse));
    },
    createProduct: async ({ principal, body, res }) => {
      const product = await products.create(principal, body);
      res.status(201).location(publicPath('products', product.id)).setHeader('ETag', etagOf(product)).json(toProductResponse(product));
    },
    getProduct: async ({ params, res }) => {
      const product = await products.get(params.id);
      res.setHeader('ETag', etagOf(product)).json(toProductResponse(product));
    },
    updateProduct: async ({ principal, params, body, expectedVersion, res }) => {
      const product = await products.patch(principal, params.id, body, expectedVersion);
      res.setHeader('ETag', etagOf(product)).json(toProductResponse(product));
    },
    replaceProduct: async ({ principal, params, body, expectedVersion, res }) => {
      const product = await products.replace(principal, params.id, body, expectedVersion);
      res.setHeader('ETag', etagOf(product)).json(toProductResponse(product));
    },
    deleteProduct: async ({ principal, params, expectedVersion, res }) => {
      await products.delete(principal, params.id, expectedVersion);
      res.status(204).end();
    },
    getProductRating: async ({ params, res }) => {
      res.json(toRatingResponse(await products.get(params.id)));
    },
  });
}
