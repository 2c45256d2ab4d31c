// What the gateway does when a call uses a deprecated element (contracts/deprecations.yaml, read by
// @platform/deprecations), for REST and GraphQL alike: the element's phase now decides whether the
// call is answered with the deprecation headers, recorded as one a dry-run brownout would have
// failed, or refused with 410 GONE (a brownout window, or past the sunset). Every outcome is
// counted by element and outcome (both bounded: the registry's entries, four outcomes); the ones
// that are not plain warnings are also logged, one JSON line each, with who was hit.
import type { Request, Response } from 'express';
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { ApiError } from '@platform/errors';
import { deprecationHeaders, type Deprecation, goneMessage, phaseAt } from '@platform/deprecations';
import { callerIdentityOf } from '../callers/caller-identity';

export type Outcome = 'warned' | 'dry_run' | 'brownout' | 'sunset';

export class DeprecationOutcomes {
  private readonly calls: Counter<'element' | 'outcome'>;

  constructor(
    registry: Registry,
    private readonly logger: Logger,
  ) {
    this.calls = new Counter({
      name: 'gateway_deprecated_element_calls_total',
      help: 'Calls that used a deprecated element, by element (one per registry entry) and outcome: warned, dry_run (a dry-run brownout would have failed it), brownout or sunset (410 GONE, or the response field left out)',
      labelNames: ['element', 'outcome'],
      registers: [registry],
    });
  }

  /**
   * Judges the elements one call uses, now: the entry that refuses the call (brownout or past the
   * sunset), or undefined when the call goes on (every use counted, dry runs logged).
   */
  judge(req: Request, res: Response, used: readonly Deprecation[], at = new Date()): { refusal?: ApiError } {
    for (const entry of used) {
      const phase = phaseAt(entry, at);
      if (phase === 'brownout' || phase === 'sunset') {
        this.record(req, res, entry, phase);
        return { refusal: new ApiError('GONE', goneMessage(entry, phase, at), { headers: deprecationHeaders([entry]) }) };
      }
    }
    for (const entry of used) this.record(req, res, entry, phaseAt(entry, at) === 'dry-run' ? 'dry_run' : 'warned');
    return {};
  }

  /** Counts one use; a dry run, brownout or sunset is logged too (a warning is only counted: every call of an old client makes one). */
  record(req: Request, res: Response, entry: Deprecation, outcome: Outcome): void {
    this.calls.inc({ element: entry.element, outcome });
    if (outcome === 'warned') return;
    // The caller named as usage records and GET /v1/deprecations name it (key, user, client
    // name/version, the key's owner), so an operator can find and contact whoever was hit.
    const { caller, client, owner } = callerIdentityOf(req, res);
    this.logger.warn(
      { deprecation: { element: entry.element, outcome, replacement: entry.replacement, sunset: entry.sunset }, caller, client, ...(owner ? { owner } : {}), ip: req.ip, userAgent: req.headers['user-agent'], traceId: res.locals.traceId },
      outcome === 'dry_run' ? 'deprecated element used during a dry-run brownout: this call would have been refused' : `deprecated element refused (${outcome})`,
    );
  }
}
