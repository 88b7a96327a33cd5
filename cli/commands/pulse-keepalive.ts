import { Command, Option } from "clipanion";
import { ConfigReader, loadEnvironment } from "../../server/pulse/config.js";
import { SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

/**
 * `svc pulse keepalive`: runs every provider in `PULSE_PROVIDERS_DIR` once (server/pulse/keepalive.ts), for
 * cron users; the daemon runs the same every 4 hours.
 */
export class PulseKeepaliveCommand extends SvcCommand {
  static override paths = [["pulse", "keepalive"]];

  static override usage = Command.Usage({
    category: "The pulse daemon",
    description: "Run the credential keep-alive providers once (for cron users)",
    details: `
      Runs each executable file in \`PULSE_PROVIDERS_DIR\` (name order; hidden files and directories are
      ignored, non-executables skipped with a warning) as \`<provider> check\`: exit 0 healthy, 1 expires soon,
      2 expired. After 1 or 2 it runs \`<provider> refresh\` (exit 0: refreshed). Each run is limited to
      \`PULSE_PROVIDER_TIMEOUT\` (default 60s). Prints one line per provider on stdout (\`--json\`: the whole
      report as JSON).

      Exits 0 when every provider is healthy or was refreshed, 1 otherwise (including a missing providers
      directory), 78 on a configuration error. With \`LOG_FILE\` set, results and alerts are also logged there.
    `,
    examples: [
      ["Check and refresh every credential", "svc pulse keepalive --environment /etc/svc/pulse.env"],
      ["Cron, every 4 hours", "0 */4 * * * svc pulse keepalive --environment /etc/svc/pulse.env"],
    ],
  });

  envFile = withValueName(
    "file",
    Option.String("--environment,--env-file", { description: "Environment file (KEY=value lines)" }),
  );
  json = Option.Boolean("--json", false, { description: "Print the report as JSON" });

  async run(): Promise<number> {
    const { formatKeepaliveSummary, readKeepaliveConfig, runKeepalive } = await import(
      "../../server/pulse/keepalive.js"
    );
    const { Logger } = await import("../../server/pulse/log.js");
    const { stdout, stderr } = this.context;
    const env = loadEnvironment(this.envFile, this.context.env);
    const reader = new ConfigReader(env);
    const config = readKeepaliveConfig(reader);
    if (config.providersDir === undefined) {
      reader.problems.push(
        "PULSE_PROVIDERS_DIR is not set; set it to the directory of provider scripts, e.g. " +
          "PULSE_PROVIDERS_DIR=/etc/svc/providers, and link scripts/providers/oauth-token into it",
      );
    }
    reader.logLevel();
    reader.check();
    const logFile = reader.optional("LOG_FILE");
    const logger =
      logFile === undefined
        ? undefined
        : new Logger({ level: reader.logLevel(), file: logFile, stderr, component: "keepalive" });
    const report = await runKeepalive({
      dir: config.providersDir as string,
      env,
      timeoutMs: config.timeoutMs,
      ...(logger === undefined ? {} : { logger }),
    });
    if (this.json) stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else if (report.error !== undefined) stderr.write(`svc: ${report.error}\n`);
    else for (const line of formatKeepaliveSummary(report)) stdout.write(`${line}\n`);
    return report.ok ? 0 : 1;
  }
}
