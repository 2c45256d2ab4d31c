import { boundedTotal, EXACT_COUNT_LIMIT } from './total';

describe('boundedTotal (the count rule of every list)', () => {
  const counter = (matching: number, estimate: number) => {
    const asked: string[] = [];
    return {
      asked,
      countUpTo: async (limit: number) => {
        asked.push(`count to ${limit}`);
        return Math.min(matching, limit);
      },
      estimate: async () => {
        asked.push('estimate');
        return estimate;
      },
    };
  };

  it('is exact up to 1,000 matches, without asking for an estimate', async () => {
    for (const matching of [0, 1, EXACT_COUNT_LIMIT]) {
      const rows = counter(matching, 5);
      expect(await boundedTotal(rows)).toEqual({ count: matching, exact: true });
      expect(rows.asked).toEqual([`count to ${EXACT_COUNT_LIMIT + 1}`]);
    }
  });

  it('past 1,000 answers the estimate, never below 1,001, flagged as not exact', async () => {
    expect(await boundedTotal(counter(5_000, 48_123.6))).toEqual({ count: 48_124, exact: false });
    expect(await boundedTotal(counter(1_001, 200))).toEqual({ count: 1_001, exact: false });
    expect(await boundedTotal(counter(2_000, Number.NaN))).toEqual({ count: 1_001, exact: false });
  });
});
