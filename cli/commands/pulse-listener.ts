import { Command, Option } from "clipanion";
import { loadEnvironment } from "../../server/pulse/config.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

export class PulseListenerCommand extends SvcCommand {
  static override paths = [["pulse", "listener"]];

  static override usage = Command.Usage({
    category: "The pulse daemon",
    description: "Turn messenger chat messages into pulses",
    details: `
      Long-polls a Telegram-Bot-API-compatible getUpdates (MESSENGER_API_BASE, default
      https://api.telegram.org) with MESSENGER_BOT_TOKEN and posts every text message from MESSENGER_CHAT_ID to
      the pulse daemon (PULSE_API_HOST, PULSE_API_PORT, PULSE_API_TOKEN) as a pulse with source=messenger.
      The offset is saved to LISTENER_STATE_PATH (default: listener-state.json beside PULSE_DB_PATH) only after
      the daemon took the message, so a daemon that is down loses nothing.

      Runs until SIGINT or SIGTERM, then exits 0. A configuration error exits 78 (EX_CONFIG; list it in the
      unit's RestartPreventExitStatus=). A refused token, another poller (409) or a daemon that is down are
      logged and retried; they never end the process.
    `,
    examples: [
      ["Run with the daemon's environment file", "svc pulse listener --environment /etc/svc-pulse/env"],
    ],
  });

  envFile = withValueName(
    "file",
    Option.String("--environment,--env-file", {
      description: "KEY=value file read like systemd's EnvironmentFile= (default: $PULSE_ENV_FILE)",
    }),
  );

  async run(): Promise<number> {
    const { MessengerListener } = await import("../../server/pulse/listener.js");
    const { readListenerConfig } = await import("../../server/pulse/listener-config.js");
    const { Logger } = await import("../../server/pulse/log.js");
    const readConfig = () => readListenerConfig(loadEnvironment(this.envFile));
    const config = readConfig();
    const logger = new Logger({
      level: config.logLevel,
      component: "pulse-listener",
      stderr: this.context.stderr,
      secrets: [config.botToken, config.apiToken],
      ...(config.logFile === undefined ? {} : { file: config.logFile }),
    });
    const controller = new AbortController();
    const stop = (signal: NodeJS.Signals) => {
      logger.info("stopping", { signal });
      controller.abort();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    try {
      await new MessengerListener({ config, logger, reloadConfig: readConfig }).run(controller.signal);
    } finally {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    }
    return EXIT.ok;
  }
}
