// One metric family for every call an app makes to another: how long each took until its answer
// (or its failure), by the app called, the operation and the outcome. Every label is bounded: the
// target and the operation are named in code, never taken from a request, and the outcome is
// `ok`, the callee's error status (an HTTP status, a gRPC status name) or a transport failure
// (`unavailable`, `timeout`, `malformed`: failure-rule.ts).
import { Histogram, type Registry } from 'prom-client';
import type { TransportFailure } from './failure-rule';

export const OUTGOING_CALL_METRIC = 'outgoing_call_duration_seconds';

export type CallOutcome = 'ok' | TransportFailure | string;

/** Stops the timer of one call with its outcome; later calls do nothing (a call ends once). */
export type FinishCall = (outcome: CallOutcome) => void;

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** One histogram per registry, however many clients an app builds on it (prom-client refuses a second). */
const histograms = new WeakMap<Registry, Histogram<'target' | 'operation' | 'outcome'>>();

function histogramOf(registry: Registry): Histogram<'target' | 'operation' | 'outcome'> {
  let histogram = histograms.get(registry);
  if (!histogram) {
    histogram = new Histogram({
      name: OUTGOING_CALL_METRIC,
      help: 'Calls this app made to another app (HTTP, GraphQL subgraph fetches, gRPC), from start to answer or failure, by target, operation and outcome',
      labelNames: ['target', 'operation', 'outcome'],
      buckets: BUCKETS,
      registers: [registry],
    });
    histograms.set(registry, histogram);
  }
  return histogram;
}

/** Starts timing one call; without a registry (tests, tools) nothing is recorded. */
export function startCall(registry: Registry | undefined, target: string, operation: string): FinishCall {
  if (!registry) return () => undefined;
  const stop = histogramOf(registry).startTimer({ target, operation });
  let finished = false;
  return (outcome) => {
    if (finished) return;
    finished = true;
    stop({ outcome });
  };
}
