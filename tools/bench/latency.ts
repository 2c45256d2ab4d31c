// What the list benchmarks report of a set of request times (ms): the median and the 95th percentile.
export function medianAndP95(samples: number[]): { median: number; p95: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)], p95: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] };
}
