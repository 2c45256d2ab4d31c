// `withTotal` in SQL, for every list: the count rule of @platform/paging (exact up to
// EXACT_COUNT_LIMIT, then the planner's estimate) over a table and SQL conditions.
import { boundedTotal, type TotalCount } from '@platform/paging';

/** What the count needs of a Prisma client (or a transaction). */
export interface RawQueries {
  $queryRawUnsafe<T = unknown>(sql: string, ...values: unknown[]): Promise<T>;
}

/** The rows of `table` matching `where` (SQL with `$1`… placeholders for `params`; empty: every row). */
export interface MatchingRows {
  table: string;
  where: string;
  params: readonly unknown[];
}

/**
 * How many rows match. The exact count stops at EXACT_COUNT_LIMIT + 1 rows; past that the
 * answer is the planner's row estimate for the same query (EXPLAIN reads statistics, no rows),
 * so the cost does not grow with the table.
 */
export function countMatching(client: RawQueries, { table, where, params }: MatchingRows): Promise<TotalCount> {
  const from = `FROM ${table}${where ? ` WHERE ${where}` : ''}`;
  return boundedTotal({
    countUpTo: async (limit) => {
      // MATERIALIZED: planned for every match, so a selective filter goes through its index
      // (planned for the first `limit` rows, PostgreSQL took a rare keyword for a common one and
      // read 175,000 orders sequentially to find 1,001), and read only as far as `limit`.
      const [{ count }] = await client.$queryRawUnsafe<{ count: number }[]>(
        `WITH matching AS MATERIALIZED (SELECT 1 ${from}) SELECT count(*)::int AS count FROM (SELECT 1 FROM matching LIMIT ${Number(limit)}) AS counted`,
        ...params,
      );
      return count;
    },
    estimate: async () => {
      const [row] = await client.$queryRawUnsafe<{ 'QUERY PLAN': unknown }[]>(`EXPLAIN (FORMAT JSON) SELECT 1 ${from}`, ...params);
      // node-postgres parses the json column; PGlite may hand it over as text.
      const plan = (typeof row['QUERY PLAN'] === 'string' ? JSON.parse(row['QUERY PLAN']) : row['QUERY PLAN']) as { Plan: { 'Plan Rows': number } }[];
      return plan[0].Plan['Plan Rows'];
    },
  });
}
