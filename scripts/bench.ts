/**
 * `npm run bench -- [name...] [--large]`: runs the named benchmarks (all of them when none is named) and prints
 * each one's figures beside its baseline; `--large` adds the rows at 100,000 and 1,000,000 records. Exit 0 when every benchmark measured (goals missed included), 1 when
 * one could not run, 2 for an unknown name.
 */
import { SvcError } from "../core/errors.js";
import { benchOptions, selectBenchmarks } from "./bench/args.js";
import { BENCHMARKS } from "./bench/registry.js";

async function main(args: readonly string[]): Promise<number> {
  let names: string[];
  try {
    names = selectBenchmarks(
      args,
      BENCHMARKS.map((benchmark) => benchmark.name),
    );
  } catch (error) {
    if (!(error instanceof SvcError)) throw error;
    process.stderr.write(`bench: ${error.message}\n`);
    return 2;
  }
  let failed = 0;
  for (const name of names) {
    const benchmark = BENCHMARKS.find((candidate) => candidate.name === name);
    if (!benchmark) continue;
    process.stdout.write(`== ${benchmark.name}: ${benchmark.description}\n`);
    try {
      await benchmark.run(
        process.stdout,
        (line) => process.stderr.write(`bench ${name}: ${line}\n`),
        benchOptions(args),
      );
    } catch (error) {
      failed++;
      process.stderr.write(`bench: ${name} could not be measured: ${(error as Error).stack}\n`);
    }
    process.stdout.write("\n");
  }
  return failed === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
