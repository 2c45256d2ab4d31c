// Catalog and inventory as real servers on loopback, for the orders tests: the orders code talks
// to them over HTTP and gRPC exactly as in production.
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import express from 'express';
import { newId } from '@platform/ids';
import { InventoryService, type InventoryServer, type ReleaseReply, type ReleaseRequest, type ReserveReply, type ReserveRequest } from '@platform/inventory-contract';
import { listen, type Listening } from '@platform/service-kit';
import type { CatalogProduct } from '../catalog/client';

export class FakeCatalog {
  readonly products = new Map<string, CatalogProduct>();
  private server?: Listening;
  /** Milliseconds to wait before answering. */
  delayMs = 0;

  add(overrides: Partial<CatalogProduct> = {}): CatalogProduct {
    const id = newId();
    const product: CatalogProduct = { id, sku: `SKU-${id.slice(-8).toUpperCase()}`, name: `Product ${id.slice(-4)}`, price: 10_000, currency: 'KRW', ...overrides };
    this.products.set(product.id, product);
    return product;
  }

  async start(port = 0): Promise<string> {
    const app = express();
    app.get('/products', async (req, res) => {
      if (this.delayMs) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      if (!req.headers.authorization) return void res.status(401).json({ code: 'UNAUTHENTICATED' });
      const ids = String(req.query.ids ?? '').split(',');
      res.json({ items: ids.flatMap((id) => (this.products.has(id) ? [this.products.get(id)] : [])), nextCursor: null, hasNext: false });
    });
    this.server = await listen(app, port, '127.0.0.1');
    return this.server.url;
  }

  async stop(): Promise<void> {
    await this.server?.close();
  }
}

export class FakeInventory {
  readonly stock = new Map<string, number>();
  /** reservation key → sku → quantity */
  readonly reservations = new Map<string, Map<string, number>>();
  delayMs = 0;
  /** Answer Release with UNAVAILABLE, as an inventory that is down would. */
  refuseReleases = false;
  private server = new Server();
  address = '';

  async start(): Promise<string> {
    const reserve = (call: ServerUnaryCall<ReserveRequest, ReserveReply>, callback: sendUnaryData<ReserveReply>) => {
      setTimeout(() => {
        const { orderId, sku, quantity } = call.request;
        const held = this.reservations.get(orderId)?.get(sku);
        const available = this.stock.get(sku);
        if (held !== undefined) return callback(null, { reservationId: `${orderId}/${sku}`, sku, quantity: held, remaining: available ?? 0 });
        if (available === undefined) return callback({ code: status.NOT_FOUND, details: `Unknown SKU ${sku}.` });
        if (available < quantity) return callback({ code: status.FAILED_PRECONDITION, details: `OUT_OF_STOCK: ${sku}` });
        this.stock.set(sku, available - quantity);
        if (!this.reservations.has(orderId)) this.reservations.set(orderId, new Map());
        this.reservations.get(orderId)!.set(sku, quantity);
        callback(null, { reservationId: `${orderId}/${sku}`, sku, quantity, remaining: available - quantity });
      }, this.delayMs);
    };
    const release = (call: ServerUnaryCall<ReleaseRequest, ReleaseReply>, callback: sendUnaryData<ReleaseReply>) => {
      if (this.refuseReleases) return callback({ code: status.UNAVAILABLE, details: 'inventory is down' });
      const held = this.reservations.get(call.request.orderId);
      this.reservations.delete(call.request.orderId);
      for (const [sku, quantity] of held ?? []) this.stock.set(sku, (this.stock.get(sku) ?? 0) + quantity);
      callback(null, { releasedCount: held?.size ?? 0 });
    };
    const implementation: InventoryServer = { reserve, release };
    this.server.addService(InventoryService, implementation);
    const port = await new Promise<number>((resolve, reject) => this.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    this.address = `127.0.0.1:${port}`;
    return this.address;
  }

  /** Units of `sku` held by reservations. */
  held(sku: string): number {
    let total = 0;
    for (const skus of this.reservations.values()) total += skus.get(sku) ?? 0;
    return total;
  }

  stop(): void {
    this.server.forceShutdown();
  }
}
