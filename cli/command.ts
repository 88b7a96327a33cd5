/**
 * The base of every `svc` command: `run()` returns the exit code; an `SvcError` (the user's input or the
 * environment was wrong) is printed as `svc: <message>` on stderr without a stack and exits 2 (78 for the
 * pulse daemon's configuration), as is a local fault (cache/local-fault.ts: a full or read-only cache).
 * Anything else is a bug: `failureReport` prints it as an internal error with its stack and how to report
 * it.
 */
import { Command } from "clipanion";
import { failureReport, SvcError, shellWord } from "../core/errors.js";
import { SVC_VERSION } from "../core/version.js";

export const EXIT = {
  ok: 0,
  /** A push was rejected (conflict, policy). */
  rejected: 1,
  /** Bad input, missing configuration, unreachable backend. */
  broken: 2,
  /** The pulse daemon's configuration is unusable (sysexits EX_CONFIG); systemd does not restart on it. */
  config: 78,
} as const;

export abstract class SvcCommand extends Command {
  /**
   * The command line as typed (runCli sets it): clipanion folds the words after `--` into the positionals,
   * and a command whose positionals mean different things on either side of `--` (`svc log [dir] -- <file>`)
   * reads them here.
   */
  argv: readonly string[] = [];

  abstract run(): Promise<number>;

  /** How many words follow `--` on the command line (0 without one). */
  protected wordsAfterDashes(): number {
    const at = this.argv.indexOf("--");
    return at === -1 ? 0 : this.argv.length - at - 1;
  }

  async execute(): Promise<number> {
    try {
      return await this.run();
    } catch (error) {
      // A full or read-only cache (or a bad SVC_CACHE_DIR) is named, with this command to run again.
      const { asLocalFault } = await import("../cache/local-fault.js");
      const fault = asLocalFault(error, { rerun: ["svc", ...this.argv].map(shellWord).join(" ") });
      this.context.stderr.write(failureReport(fault ?? error, SVC_VERSION));
      return error instanceof SvcError && error.code === "SVC_CONFIG" ? EXIT.config : EXIT.broken;
    }
  }
}
