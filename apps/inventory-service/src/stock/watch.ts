// WatchStock's feed. A trigger on the stock table announces every committed change on the
// PostgreSQL channel `stock_levels` (see the migration), whichever replica made it; each replica
// LISTENs once and fans the changes out to its own watchers. A watcher is registered before its
// first levels are read, and every level carries the row's version, so a change committed while
// those levels were read is neither lost nor shown twice, and no watcher ever sees a level older
// than one it has seen.
import type { NotificationHandlers } from '@platform/db';
import type { Logger } from '@platform/service-kit';
import type { StockLevelRow, StockRepository } from './repository';

export const STOCK_LEVELS_CHANNEL = 'stock_levels';

export interface Notifications {
  listen(channel: string, handlers: NotificationHandlers): Promise<() => Promise<void>>;
}

export interface Watcher {
  /** Called with each level, in order; never twice for one version of a SKU. */
  send(level: StockLevelRow): void;
  /** The feed stopped for good (the service is stopping): end the watch. */
  end(): void;
}

interface Registration {
  watcher: Watcher;
  skus: readonly string[];
  /** The newest version sent per SKU. */
  sent: Map<string, number>;
  /** Changes that arrived before the first levels were sent. */
  held?: StockLevelRow[];
}

export class StockWatch {
  private readonly bySku = new Map<string, Set<Registration>>();
  private listening?: Promise<() => Promise<void>>;
  private closed = false;

  constructor(
    private readonly notifications: Notifications,
    private readonly stock: StockRepository,
    private readonly logger: Logger,
  ) {}

  /** Watchers on this replica. */
  get size(): number {
    const all = new Set<Registration>();
    for (const registrations of this.bySku.values()) for (const registration of registrations) all.add(registration);
    return all.size;
  }

  /**
   * Sends the current level of each known SKU of `skus`, then every change of any of them.
   * Resolves once the current levels are sent; the function it returns stops the watch.
   */
  async watch(skus: readonly string[], watcher: Watcher): Promise<() => void> {
    if (this.closed) throw new Error('stock watch is closed');
    await this.listen();
    const registration: Registration = { watcher, skus, sent: new Map(), held: [] };
    for (const sku of skus) {
      if (!this.bySku.has(sku)) this.bySku.set(sku, new Set());
      this.bySku.get(sku)!.add(registration);
    }
    const stop = () => this.remove(registration);
    try {
      const levels = await this.stock.findLevels(skus);
      const bySku = new Map(levels.map((level) => [level.sku, level]));
      const held = registration.held!;
      registration.held = undefined;
      for (const sku of skus) if (bySku.has(sku)) this.deliver(registration, bySku.get(sku)!);
      for (const level of held) this.deliver(registration, level);
    } catch (error) {
      stop();
      throw error;
    }
    return stop;
  }

  /** Stops listening and ends every watch (the service is stopping). */
  async close(): Promise<void> {
    this.closed = true;
    const registrations = new Set([...this.bySku.values()].flatMap((set) => [...set]));
    this.bySku.clear();
    for (const registration of registrations) registration.watcher.end();
    const unlisten = await this.listening?.catch(() => undefined);
    await unlisten?.();
  }

  private listen(): Promise<() => Promise<void>> {
    this.listening ??= this.notifications.listen(STOCK_LEVELS_CHANNEL, { onNotification: (payload) => this.changed(payload), onReconnect: () => void this.resync() }).catch((error: unknown) => {
      this.listening = undefined;
      throw error;
    });
    return this.listening;
  }

  private changed(payload: string): void {
    let level: StockLevelRow;
    try {
      level = JSON.parse(payload) as StockLevelRow;
    } catch {
      this.logger.warn({ payload }, 'stock_levels notification is not JSON; ignored');
      return;
    }
    for (const registration of this.bySku.get(level.sku) ?? []) {
      if (registration.held) registration.held.push(level);
      else this.deliver(registration, level);
    }
  }

  private deliver(registration: Registration, level: StockLevelRow): void {
    if (level.version <= (registration.sent.get(level.sku) ?? -1)) return;
    registration.sent.set(level.sku, level.version);
    registration.watcher.send(level);
  }

  /** The listening connection was lost for a while: send what changed meanwhile. */
  private async resync(): Promise<void> {
    const skus = [...this.bySku.keys()];
    if (!skus.length) return;
    try {
      for (const level of await this.stock.findLevels(skus)) this.changed(JSON.stringify(level));
      this.logger.warn({ skus: skus.length }, 'stock_levels listener reconnected; watchers resynchronised');
    } catch (error) {
      this.logger.error({ err: error }, 'stock_levels resync failed');
    }
  }

  private remove(registration: Registration): void {
    for (const sku of registration.skus) {
      const registrations = this.bySku.get(sku);
      registrations?.delete(registration);
      if (registrations?.size === 0) this.bySku.delete(sku);
    }
  }
}
