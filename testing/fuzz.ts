/**
 * How long each fast-check property runs, in one place. Every property in the repository takes its run count
 * from `fuzzRuns(base)` (or its parameters from `fuzzParams(base)`), where `base` is what it needs to be
 * useful in `npm test`:
 *
 * - unset: `base` runs (the short runs of `npm test`);
 * - `SVC_FUZZ=1` (what `npm run fuzz` sets): `FUZZ_FACTOR` × `base` runs;
 * - `SVC_FUZZ_RUNS=<n>`: `n` runs for every property, whatever its base (a soak, or one run to replay a seed).
 *
 * The seed: fast-check draws one per property and prints it, with the shrunk path, in every failure report.
 * `SVC_FUZZ_SEED=<n>` gives every property that seed instead, so a failure reruns as it happened:
 * `SVC_FUZZ_SEED=<seed> npx ava dist/<file>.test.js --match '<title>'`. A bad value of any of the three is a
 * `SettingError` naming it, never a silently shorter run.
 */
import type { ExecutionContext } from "ava";
import fc from "fast-check";
import { readCount, SettingError } from "../core/settings.js";

/** How many times longer each property runs under `SVC_FUZZ=1`. */
export const FUZZ_FACTOR = 10;

/** The run count of a property whose `npm test` count is `base`. */
export function fuzzRuns(base: number, env: NodeJS.ProcessEnv = process.env): number {
  const runs = readCount("SVC_FUZZ_RUNS", env.SVC_FUZZ_RUNS, { fallback: 0, min: 1 });
  if (runs > 0) return runs;
  const fuzz = readCount("SVC_FUZZ", env.SVC_FUZZ, { fallback: 0, max: 1 });
  return fuzz === 1 ? base * FUZZ_FACTOR : base;
}

/** `SVC_FUZZ_SEED`, or undefined: fast-check picks a seed and prints it with any failure. */
export function fuzzSeed(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env.SVC_FUZZ_SEED;
  if (raw === undefined || raw.trim() === "") return undefined;
  // fast-check's seeds are 32-bit integers and may be negative, as its reports print them.
  const seed = Number(raw.trim());
  if (!/^-?\d+$/.test(raw.trim()) || Math.abs(seed) > 2 ** 31)
    throw new SettingError("SVC_FUZZ_SEED", raw, "a whole number as fast-check prints its seeds", 42);
  return seed;
}

/** The parameters of `fc.assert`/`fc.check` for a property whose `npm test` run count is `base`. */
export function fuzzParams<Ts>(base: number, env: NodeJS.ProcessEnv = process.env): fc.Parameters<Ts> {
  const seed = fuzzSeed(env);
  return seed === undefined ? { numRuns: fuzzRuns(base, env) } : { numRuns: fuzzRuns(base, env), seed };
}

/** Runs `property` and fails the test with fast-check's report (seed, counterexample, shrunk path). */
export function holds<Ts>(t: ExecutionContext, property: fc.IProperty<Ts>, base: number): void {
  const details = fc.check(property, fuzzParams<Ts>(base));
  t.false(details.failed, fc.defaultReportMessage(details));
}

/** `holds` for an asynchronous property. */
export async function holdsAsync<Ts>(
  t: ExecutionContext,
  property: fc.IAsyncProperty<Ts>,
  base: number,
): Promise<void> {
  const details = await fc.check(property, fuzzParams<Ts>(base));
  t.false(details.failed, fc.defaultReportMessage(details));
}

/**
 * One path component git allows in a tree: no `/` or NUL, not `.`, `..` or `.git`; awkward names (spaces,
 * newlines, quotes, UTF-8, a leading `:` or `-`) first, then any binary string of up to `maxLength`.
 */
export function gitPathComponent(maxLength = 12): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.constantFrom(
        ":odd",
        "a b",
        "new\nline",
        "tab\there",
        '"q"',
        "back\\slash",
        "ünï.md",
        "0042.md",
        "a".repeat(40),
        "-x",
        " lead",
        "issues",
      ),
      fc.string({ unit: "binary", minLength: 1, maxLength }),
    )
    .filter((name) => !/[/\0]/.test(name) && name !== "." && name !== ".." && name.toLowerCase() !== ".git");
}
