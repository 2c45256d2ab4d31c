// The `RateLimit` field an answer carries, as a test expects it: `"<policy>";r=<remaining>;t=<s>`.

/**
 * Matches the field with exactly `remaining` points left in a window of `windowS` seconds, its
 * seconds to reset anywhere from 1 to `windowS`. The remaining points are what the tests are
 * about; the seconds depend on when the window began, and on a loaded host a second can pass
 * between a window's first call and a later one (`t=59` where `t=60` was written, in CI).
 * An asymmetric matcher: use it with `toEqual`.
 */
export function rateLimitField(policy: string, remaining: number, windowS: number) {
  const shape = new RegExp(`^"${policy}";r=${remaining};t=(\\d+)$`);
  return {
    $$typeof: Symbol.for('jest.asymmetricMatcher'), // printed by its description in a failure, not as an object
    asymmetricMatch(actual: unknown): boolean {
      const seconds = typeof actual === 'string' ? shape.exec(actual)?.[1] : undefined;
      return seconds !== undefined && Number(seconds) >= 1 && Number(seconds) <= windowS;
    },
    toString: () => `RateLimit "${policy}";r=${remaining};t=1..${windowS}`,
    toAsymmetricMatcher: () => `RateLimit "${policy}";r=${remaining};t=1..${windowS}`,
  };
}
