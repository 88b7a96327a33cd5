/**
 * The base of every `svc` command: `run()` returns the exit code; an `SvcError` (the user's input or the
 * environment was wrong) is printed as `svc: <message>` on stderr without a stack and exits 2. Anything
 * else is a bug and keeps its stack.
 */
import { Command } from "clipanion";
import { SvcError } from "../core/errors.js";

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
  abstract run(): Promise<number>;

  async execute(): Promise<number> {
    try {
      return await this.run();
    } catch (error) {
      if (error instanceof SvcError) {
        this.context.stderr.write(`svc: ${error.message}\n`);
        return error.code === "SVC_CONFIG" ? EXIT.config : EXIT.broken;
      }
      this.context.stderr.write(
        `svc: internal error (a bug in svc, please report it):\n${(error as Error).stack}\n`,
      );
      return EXIT.broken;
    }
  }
}
