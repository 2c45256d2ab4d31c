// The one count rule of every list (`withTotal=true`, docs/api.md "Totals"): exact while that is
// cheap, the planner's estimate past it, and a header that says which.

/**
 * Up to this many matching rows are counted exactly: the count stops there, so it reads at most
 * this many index entries whatever the table's size.
 */
export const EXACT_COUNT_LIMIT = 1_000;

/** The header that flags an estimated `totalCount`; without it the total is exact. */
export const TOTAL_ESTIMATED_HEADER = 'Total-Count-Estimated';

/** How many rows match: exact up to EXACT_COUNT_LIMIT, else an estimate, never below EXACT_COUNT_LIMIT + 1. */
export interface TotalCount {
  count: number;
  exact: boolean;
}

/**
 * Counts the matches up to EXACT_COUNT_LIMIT + 1; past EXACT_COUNT_LIMIT, asks `estimate` (the
 * planner's row estimate for the same filters) instead of reading on.
 */
export async function boundedTotal(counter: { countUpTo: (limit: number) => Promise<number>; estimate: () => Promise<number> }): Promise<TotalCount> {
  const count = await counter.countUpTo(EXACT_COUNT_LIMIT + 1);
  if (count <= EXACT_COUNT_LIMIT) return { count, exact: true };
  const estimate = await counter.estimate();
  return { count: Math.max(EXACT_COUNT_LIMIT + 1, Number.isFinite(estimate) ? Math.round(estimate) : 0), exact: false };
}
