/**
 * Which benchmarks `npm run bench -- [name...]` runs: none named means all of them, in registry order;
 * named ones run in the order given, each once.
 */
import { UserFacingError } from "../../core/errors.js";

/** Returns the benchmarks to run, or throws `SVC_USAGE` naming the unknown ones and listing the known ones. */
export function selectBenchmarks(args: readonly string[], known: readonly string[]): string[] {
  if (args.length === 0) return [...known];
  const unknown = args.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    const names = unknown.map((name) => JSON.stringify(name)).join(", ");
    throw new UserFacingError(
      "SVC_USAGE",
      `unknown benchmark ${names}; known benchmarks: ${known.join(", ")}. ` +
        `Run one with for example: npm run bench -- ${known[0] ?? "<name>"}`,
      { data: { unknown, known } },
    );
  }
  return [...new Set(args)];
}
