/**
 * Exponential backoff, the one implementation: the HTTP client's 429 retries, the messenger listener's poll
 * and trigger retries, and the pulse queue's retry of a failed run all call `backoffMs`.
 *
 * Contract: the delay is `min(capMs, baseMs·2^exponent)` with `jitter` applied, pure apart from `random`
 * (a value in [0, 1), `Math.random` unless injected). The exponent is clamped to 30 so a long outage never
 * overflows to Infinity. The three jitters differ on purpose: each keeps the exact numbers its caller had
 * before they were merged, including what an injected `random` of 0 or 1 yields in their tests.
 */

export type Jitter =
  /** Plus a whole number of ms in [0, maxMs): `delay + floor(random·maxMs)`. */
  | { readonly kind: "add"; readonly maxMs: number }
  /** Down by at most half: `round(delay·(1 − random/2))`, in (delay/2, delay]; random 0 gives the full delay. */
  | { readonly kind: "down-to-half" }
  /** From half up: `round(delay·(0.5 + random/2))`, in [delay/2, delay); random 0 gives half the delay. */
  | { readonly kind: "half-and-up" };

export interface BackoffPolicy {
  /** The delay at exponent 0. */
  readonly baseMs: number;
  /** The most the delay grows to before jitter; no cap when absent. */
  readonly capMs?: number;
  readonly jitter: Jitter;
}

const MAX_EXPONENT = 30;

/** The delay before jitter: `min(capMs, baseMs·2^exponent)`, negative exponents counting as 0. */
export function backoffCeilingMs(exponent: number, policy: BackoffPolicy): number {
  const doubled = policy.baseMs * 2 ** Math.min(Math.max(0, exponent), MAX_EXPONENT);
  return Math.min(policy.capMs ?? Number.POSITIVE_INFINITY, doubled);
}

/** The wait after the `exponent`-th doubling, jittered by `policy.jitter` with `random()` in [0, 1). */
export function backoffMs(
  exponent: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = backoffCeilingMs(exponent, policy);
  const jitter = policy.jitter;
  switch (jitter.kind) {
    case "add":
      return ceiling + Math.floor(random() * jitter.maxMs);
    case "down-to-half":
      return Math.round(ceiling * (1 - random() / 2));
    case "half-and-up":
      return Math.round(ceiling * (0.5 + random() * 0.5));
  }
}
