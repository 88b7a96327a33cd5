/**
 * `npm run swarm -- [--agents 16] [--seconds 60] [--ops N] [--issues K] [--seed N] [--rate-limit R] [--json]
 * [--keep]` (issue 17): many agents pushing and pulling at once against one simulator (`swarm/run.ts`), then
 * the invariants checked and the figures printed, on stdout; progress goes to stderr. Exit 0 when every
 * invariant holds, 1 when one does not (each violation named), 2 for bad arguments or a run that could not
 * be made.
 */
import { SvcError } from "../core/errors.js";
import { parseSwarmArgs } from "./swarm/options.js";
import { holds, renderReport } from "./swarm/report.js";
import { runSwarm } from "./swarm/run.js";

async function main(argv: readonly string[]): Promise<number> {
  let command: ReturnType<typeof parseSwarmArgs>;
  try {
    command = parseSwarmArgs(argv, () => Math.floor(Math.random() * 2 ** 31));
  } catch (error) {
    if (!(error instanceof SvcError)) throw error;
    process.stderr.write(`swarm: ${error.message}\n`);
    return 2;
  }
  let report: Awaited<ReturnType<typeof runSwarm>>;
  try {
    report = await runSwarm(command.options, {
      progress: (line) => process.stderr.write(`swarm: ${line}\n`),
    });
  } catch (error) {
    process.stderr.write(`swarm: the run could not be made: ${(error as Error).stack}\n`);
    return 2;
  }
  process.stdout.write(command.json ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report));
  return holds(report) ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
