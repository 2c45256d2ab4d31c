/** What one count (this replica's memory windows, or the leases of the count shared in Redis) says of one call. */
export interface CountAnswer {
  allowed: boolean;
  /** Points the caller has left in the window, as far as this count knows. */
  remaining: number;
  msBeforeNext: number;
}
