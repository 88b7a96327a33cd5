import { Command, Option } from "clipanion";
import { loadEnvironment } from "../../server/pulse/config.js";
import type { PulseDaemon as Daemon } from "../../server/pulse/daemon.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

export class PulseDaemonCommand extends SvcCommand {
  static override paths = [["pulse", "daemon"]];

  static override usage = Command.Usage({
    category: "The pulse daemon",
    description: "Run the pulse daemon: queue, scheduler, runner, heartbeat, keep-alive and HTTP API",
    details: `
      Reads its configuration from the environment and from \`--environment\` (variables already set win).
      The database must be at the newest schema revision: run \`svc pulse migrate\` first. The first line on
      stderr is \`svc-pulse listening on http://<host>:<port>\`. SIGTERM or SIGINT stop it gracefully: no new
      pulses start, running ones get \`PULSE_SHUTDOWN_GRACE\` (default 60 s) to finish, then they are stopped
      and go back to the queue with their attempt given back.

      Exit codes: 0 stopped by a signal; 78 the configuration is unusable (systemd does not restart);
      1 the API could not be bound.
    `,
    examples: [
      ["Run with the deployed environment file", "svc pulse daemon --environment /etc/svc/pulse.env"],
    ],
  });

  envFile = withValueName(
    "file",
    Option.String("--environment,--env-file", { description: "Environment file (KEY=value lines)" }),
  );

  async run(): Promise<number> {
    const { ApiListenError, PulseDaemon, readDaemonConfig } = await import("../../server/pulse/daemon.js");
    const config = readDaemonConfig(loadEnvironment(this.envFile));
    let daemon: Daemon;
    try {
      daemon = await PulseDaemon.start(config);
    } catch (error) {
      if (error instanceof ApiListenError) {
        this.context.stderr.write(`svc: ${error.message}\n`);
        return EXIT.rejected;
      }
      throw error;
    }
    this.context.stderr.write(`svc-pulse listening on ${daemon.url}\n`);
    // Log files are opened per line, so SIGHUP (sent by some log rotators) needs no action; without a
    // handler it would end the process.
    const ignoreHangup = () => daemon.logger.info("SIGHUP received; nothing to reopen");
    process.on("SIGHUP", ignoreHangup);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    daemon.logger.info(`${signal} received; stopping`);
    this.context.stderr.write(`svc-pulse: ${signal}, stopping\n`);
    await daemon.close();
    process.off("SIGHUP", ignoreHangup);
    this.context.stderr.write("svc-pulse: stopped\n");
    return EXIT.ok;
  }
}
