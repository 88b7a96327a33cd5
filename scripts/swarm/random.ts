/** A small seeded generator (mulberry32), so a swarm's choices repeat from its `--seed`. */

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** A whole number in [0, n). */
  below(n: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const below = (n: number) => Math.floor(next() * n);
  return {
    next,
    below,
    pick: <T>(items: readonly T[]): T => {
      if (items.length === 0) throw new Error("pick from an empty list");
      return items[below(items.length)] as T;
    },
  };
}
