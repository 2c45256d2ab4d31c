// Catalog and inventory as real servers on loopback, for the orders tests: the orders code talks
// to them over HTTP and gRPC exactly as in production; and the app started over them.
import { Server, ServerCredentials, status, type sendUnaryData, type ServerReadableStream, type ServerUnaryCall } from '@grpc/grpc-js';
import express from 'express';
import { newId } from '@platform/ids';
import {
  createInventoryClient,
  type InventoryGateway,
  InventoryService,
  type InventoryServer,
  type FulfilReply,
  type FulfilRequest,
  type ReleaseReply,
  type ReleaseRequest,
  type ReserveLine,
  type ReserveOrderReply,
  type ReserveReply,
  type ReserveRequest,
  toGrpcStatus,
} from '@platform/inventory-contract';
import { Conflict, NotFound, OutOfStock } from '@platform/errors';
import { createOutgoingCalls } from '@platform/outgoing-calls';
import { createLogger, createMetrics, Health, listen, type Listening } from '@platform/service-kit';
import { createOrdersApp } from '../app';
import { type CatalogProduct, createCatalogClient } from '../catalog/client';
import type { PrismaClient } from '../generated/prisma/client';

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
  /**
   * Keys replaced by a ReserveOrder naming them (`replaces_order_id`), as inventory's REPLACED
   * reservations: the replacing key, and per SKU the quantity held and how much of it the
   * replacement took over.
   */
  readonly replaced = new Map<string, { by: string; lines: Map<string, { quantity: number; handedOver: number }> }>();
  delayMs = 0;
  /** Answer Release with UNAVAILABLE, as an inventory that is down would. */
  refuseReleases = false;
  /** How long a Release takes to answer (what it gives back is given back at once). */
  releaseDelayMs = 0;
  /** Reservation keys inventory was told shipped (Fulfil): their stock left, none of it comes back. */
  readonly fulfilled = new Set<string>();
  private server = new Server();
  address = '';

  async start(): Promise<string> {
    const reserve = (call: ServerUnaryCall<ReserveRequest, ReserveReply>, callback: sendUnaryData<ReserveReply>) => {
      setTimeout(() => {
        const { orderId, sku, quantity } = call.request;
        const held = this.reservations.get(orderId)?.get(sku);
        const available = this.stock.get(sku);
        if (held !== undefined) return callback(null, { reservationId: `${orderId}/${sku}`, sku, quantity: held, remaining: available ?? 0, error: undefined });
        if (available === undefined) return callback(toGrpcStatus(new NotFound(`Unknown SKU ${sku}.`, [sku])));
        if (available < quantity) return callback(toGrpcStatus(new OutOfStock(`OUT_OF_STOCK: ${sku}`, [sku])));
        this.stock.set(sku, available - quantity);
        if (!this.reservations.has(orderId)) this.reservations.set(orderId, new Map());
        this.reservations.get(orderId)!.set(sku, quantity);
        callback(null, { reservationId: `${orderId}/${sku}`, sku, quantity, remaining: available - quantity, error: undefined });
      }, this.delayMs);
    };
    // All lines or none, as inventory's ReserveOrder; lines the order already holds take nothing.
    const reserveOrder = (call: ServerReadableStream<ReserveLine, ReserveOrderReply>, callback: sendUnaryData<ReserveOrderReply>) => {
      const lines: ReserveLine[] = [];
      call.on('data', (line: ReserveLine) => lines.push(line));
      call.on('end', () =>
        setTimeout(() => {
          const orderId = lines[0]?.orderId ?? '';
          const replaces = lines[0]?.replacesOrderId || undefined;
          const held = this.reservations.get(orderId) ?? new Map<string, number>();
          const fresh = lines.filter((line) => !held.has(line.sku));
          // The replaced key's units of a SKU count as available to the line of that SKU.
          const credit = (fresh.length && replaces && this.reservations.get(replaces)) || new Map<string, number>();
          const needed = (line: ReserveLine) => Math.max(line.quantity - (credit.get(line.sku) ?? 0), 0);
          // Refused as inventory refuses: its domain errors, through the contract's gRPC mapping.
          const unknown = fresh.filter((line) => !this.stock.has(line.sku)).map((line) => line.sku);
          if (unknown.length) return callback(toGrpcStatus(new NotFound(`refused: ${unknown.join(', ')}`, unknown)));
          const short = fresh.filter((line) => this.stock.get(line.sku)! < needed(line)).map((line) => line.sku);
          // Short while the key it replaces holds nothing (taken over by another replacement, or ended): a conflict.
          if (short.length && replaces && !this.reservations.has(replaces)) return callback(toGrpcStatus(new Conflict('CONFLICT', `${replaces} no longer holds its reservations`)));
          if (short.length) return callback(toGrpcStatus(new OutOfStock(`refused: ${short.join(', ')}`, short)));
          for (const line of fresh) {
            this.stock.set(line.sku, this.stock.get(line.sku)! - needed(line));
            held.set(line.sku, line.quantity);
          }
          if (replaces && credit.size) {
            this.reservations.delete(replaces);
            this.replaced.set(replaces, { by: orderId, lines: new Map([...credit].map(([sku, quantity]) => [sku, { quantity, handedOver: Math.min(quantity, held.get(sku) ?? 0) }])) });
          }
          this.reservations.set(orderId, held);
          callback(null, {
            orderId,
            reservations: lines.map((line) => ({ reservationId: `${orderId}/${line.sku}`, sku: line.sku, quantity: held.get(line.sku)!, remaining: this.stock.get(line.sku)!, error: undefined })),
          });
        }, this.delayMs),
      );
    };
    const unimplemented = (_call: unknown, callback: sendUnaryData<never>) => callback({ code: status.UNIMPLEMENTED, details: 'not in this fake' });
    const release = (call: ServerUnaryCall<ReleaseRequest, ReleaseReply>, callback: sendUnaryData<ReleaseReply>) => {
      if (this.refuseReleases) return callback({ code: status.UNAVAILABLE, details: 'inventory is down' });
      const { orderId } = call.request;
      const held = this.reservations.get(orderId);
      const giveBack = new Map(held);
      // Releasing a replacement undoes it: the key it replaced holds its units again.
      for (const [key, { by, lines }] of held ? this.replaced : []) {
        if (by !== orderId) continue;
        this.replaced.delete(key);
        this.reservations.set(key, new Map([...lines].map(([sku, line]) => [sku, line.quantity])));
        for (const [sku, line] of lines) giveBack.set(sku, (giveBack.get(sku) ?? 0) - line.handedOver);
      }
      // Releasing a replaced key keeps its replacement: what was not taken over goes back.
      const replacedLines = this.replaced.get(orderId)?.lines;
      this.replaced.delete(orderId);
      for (const [sku, line] of replacedLines ?? []) giveBack.set(sku, (giveBack.get(sku) ?? 0) + line.quantity - line.handedOver);
      this.reservations.delete(orderId);
      for (const [sku, quantity] of giveBack) this.stock.set(sku, (this.stock.get(sku) ?? 0) + quantity);
      setTimeout(() => callback(null, { releasedCount: (held?.size ?? 0) + (replacedLines?.size ?? 0) }), this.releaseDelayMs);
    };
    const fulfil = (call: ServerUnaryCall<FulfilRequest, FulfilReply>, callback: sendUnaryData<FulfilReply>) => {
      if (this.refuseReleases) return callback({ code: status.UNAVAILABLE, details: 'inventory is down' });
      const { orderId } = call.request;
      const held = this.reservations.get(orderId);
      this.reservations.delete(orderId);
      // A key shipped while replaced: its replacement lost, so it ends, giving back what it took
      // beyond the units handed over; the key's own units leave with the order.
      const replaced = this.replaced.get(orderId);
      this.replaced.delete(orderId);
      const loser = replaced && this.reservations.get(replaced.by);
      if (replaced && loser) {
        this.reservations.delete(replaced.by);
        for (const [sku, quantity] of loser) this.stock.set(sku, (this.stock.get(sku) ?? 0) + quantity - (replaced.lines.get(sku)?.handedOver ?? 0));
      }
      if (held || replaced) this.fulfilled.add(orderId);
      callback(null, { fulfilledCount: (held?.size ?? 0) + (replaced?.lines.size ?? 0) });
    };
    const implementation: InventoryServer = {
      reserve,
      release,
      fulfil,
      reserveOrder,
      getStock: unimplemented,
      setStock: unimplemented,
      adjustStock: unimplemented,
      watchStock: (call) => call.emit('error', { code: status.UNIMPLEMENTED }),
      reserveStream: (call) => call.emit('error', { code: status.UNIMPLEMENTED }),
    };
    this.server.addService(InventoryService, implementation);
    const port = await new Promise<number>((resolve, reject) => this.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    this.address = `127.0.0.1:${port}`;
    return this.address;
  }

  /** Units of `sku` held by reservations (a replaced key's: those not taken over). */
  held(sku: string): number {
    let total = 0;
    for (const skus of this.reservations.values()) total += skus.get(sku) ?? 0;
    for (const { lines } of this.replaced.values()) total += (lines.get(sku)?.quantity ?? 0) - (lines.get(sku)?.handedOver ?? 0);
    return total;
  }

  stop(): void {
    this.server.forceShutdown();
  }
}

/** orders-service as its tests run it: the real app on loopback, over `prisma`, with a fake catalog and a fake inventory of its own. */
export interface OrdersWithFakes {
  built: Awaited<ReturnType<typeof createOrdersApp>>;
  server: Listening;
  catalog: FakeCatalog;
  catalogUrl: string;
  inventory: FakeInventory;
  inventoryClient: InventoryGateway;
  /** Stops the app's sweeper and server, then the fakes (not the database). */
  stop(): Promise<void>;
}

export async function startOrdersWithFakes(prisma: PrismaClient, options: { jwtSecret: string; name: string }): Promise<OrdersWithFakes> {
  const catalog = new FakeCatalog();
  const inventory = new FakeInventory();
  const catalogUrl = await catalog.start();
  const inventoryClient = createInventoryClient(await inventory.start());
  const built = await createOrdersApp({
    config: { jwtVerifySecrets: [options.jwtSecret], cursorSecret: 'orders-cursor-secret', REQUEST_TIMEOUT_MS: 5_000, NODE_ENV: 'test' },
    prisma,
    catalog: createCatalogClient(createOutgoingCalls().http('catalog', catalogUrl)),
    inventory: inventoryClient,
    logger: createLogger(options.name, 'silent'),
    health: new Health(),
    metrics: createMetrics(options.name),
  });
  const server = await listen(built.app, 0, '127.0.0.1');
  const stop = async () => {
    try {
      await built.sweeper.stop();
      await server.close();
    } finally {
      inventoryClient.close();
      inventory.stop();
      await catalog.stop();
    }
  };
  return { built, server, catalog, catalogUrl, inventory, inventoryClient, stop };
}
