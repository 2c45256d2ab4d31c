// Bounded load for latency and fault tests: a fixed number of calls, a few at a time.

/** Runs `count` calls, at most `concurrency` at once; results in call order. */
export async function runBounded<T>(count: number, concurrency: number, call: (index: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await call(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

/** Nearest-rank percentile: the smallest value at or above which lies `p` (0–1) of `values`. */
export function percentile(values: number[], p: number): number {
  if (!values.length) throw new Error('no values');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)];
}
