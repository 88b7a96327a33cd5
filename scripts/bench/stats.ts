/** Statistics the benchmarks report. */

/** The middle of `values` in numeric order; of an even count the upper middle one (a measured run, not an average); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}
