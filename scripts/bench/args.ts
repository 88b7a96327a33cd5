/**
 * What `npm run bench -- [name...] [--large]` asks for: the benchmarks (none named means all of them, in
 * registry order; named ones run in the order given, each once) and the options (`--large`: the 100,000- and
 * 1,000,000-record rows, which take minutes).
 */
import { UserFacingError } from "../../core/errors.js";

export interface BenchOptions {
  /** `--large`: also the rows at 100,000 and 1,000,000 records. */
  readonly large: boolean;
}

const FLAGS = ["--large"];

/** Returns the benchmarks to run, or throws `SVC_USAGE` naming the unknown ones and listing the known ones. */
export function selectBenchmarks(args: readonly string[], known: readonly string[]): string[] {
  const flags = args.filter((arg) => arg.startsWith("-"));
  const unknownFlags = flags.filter((flag) => !FLAGS.includes(flag));
  if (unknownFlags.length > 0) {
    throw new UserFacingError(
      "SVC_USAGE",
      `unknown option ${unknownFlags.map((flag) => JSON.stringify(flag)).join(", ")}; known options: ${FLAGS.join(", ")}. ` +
        `Run for example: npm run bench -- clone --large`,
      { data: { unknown: unknownFlags, known: FLAGS } },
    );
  }
  const names = args.filter((arg) => !arg.startsWith("-"));
  if (names.length === 0) return [...known];
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    const listed = unknown.map((name) => JSON.stringify(name)).join(", ");
    throw new UserFacingError(
      "SVC_USAGE",
      `unknown benchmark ${listed}; known benchmarks: ${known.join(", ")}. ` +
        `Run one with for example: npm run bench -- ${known[0] ?? "<name>"}`,
      { data: { unknown, known } },
    );
  }
  return [...new Set(names)];
}

/** The options among `args` (the names are `selectBenchmarks`'s). */
export function benchOptions(args: readonly string[]): BenchOptions {
  return { large: args.includes("--large") };
}
