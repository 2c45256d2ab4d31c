import { Router } from 'express';

export type ReadinessCheck = () => Promise<void>;

/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: dependencies answer and
 * the process is not stopping). Readiness fails first on SIGTERM so traffic moves away.
 */
export class Health {
  private stopping = false;
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly stoppingListeners: (() => void)[] = [];

  addCheck(name: string, check: ReadinessCheck): this {
    this.checks.set(name, check);
    return this;
  }

  markStopping(): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const listener of this.stoppingListeners) listener();
  }

  /** Other health surfaces (gRPC health) that must turn unready with this one. */
  onStopping(listener: () => void): this {
    this.stoppingListeners.push(listener);
    return this;
  }

  get isStopping(): boolean {
    return this.stopping;
  }

  async readiness(): Promise<{ ready: boolean; checks: Record<string, string> }> {
    const checks: Record<string, string> = {};
    if (this.stopping) return { ready: false, checks: { process: 'stopping' } };
    await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        try {
          await check();
          checks[name] = 'ok';
        } catch {
          checks[name] = 'failing';
        }
      }),
    );
    return { ready: Object.values(checks).every((state) => state === 'ok'), checks };
  }

  router(): Router {
    const router = Router();
    router.get('/healthz', (_req, res) => {
      res.json({ status: 'ok' });
    });
    router.get('/readyz', async (_req, res) => {
      const { ready, checks } = await this.readiness();
      if (!ready) res.setHeader('Retry-After', '5');
      res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks });
    });
    return router;
  }
}
