import { Command, Option } from "clipanion";
import { failureReport } from "../../core/errors.js";
import { SVC_VERSION } from "../../core/version.js";
import { ConfigError, ConfigReader, EXIT_CONFIG, loadEnvironment } from "../../server/pulse/config.js";
import { withValueName } from "../command-spec.js";

/** sysexits EX_USAGE: not 2, which a keep-alive runner reads as "expired". */
const EXIT_USAGE = 64;

/**
 * `svc pulse provider oauth check|refresh`: the shipped keep-alive provider (server/pulse/oauth.ts). Not an
 * `SvcCommand`: its exit codes are the provider contract (2 means "expired" / "log in again"), so errors
 * are mapped here instead of all becoming 2.
 */
export class PulseProviderOauthCommand extends Command {
  static override paths = [["pulse", "provider", "oauth"]];

  static override usage = Command.Usage({
    category: "The pulse daemon",
    description: "The OAuth keep-alive provider: check or refresh the agent's OAuth token",
    details: `
      Reads the token from the JSON file \`OAUTH_CREDENTIALS_FILE\` (camelCase \`accessToken\`,
      \`refreshToken\`, \`expiresAt\` in epoch milliseconds, or snake_case \`access_token\`, \`refresh_token\`,
      \`expires_at\` in epoch seconds; at the top level or under one key such as \`claudeAiOauth\`).

      \`check\` exits 0 when the token expires later than \`OAUTH_REFRESH_THRESHOLD\` (default 6h), 1 when it
      expires within it, 2 when it has expired or cannot be read.

      \`refresh\` (under \`<file>.lock\`) sends a refresh-token grant to \`OAUTH_TOKEN_ENDPOINT\` with
      \`OAUTH_CLIENT_ID\` (and \`OAUTH_CLIENT_SECRET\`, \`OAUTH_SCOPE\` when set) if the token is still within
      the threshold, then replaces the file atomically (mode 0600), keeping every other field. Exits 0 when
      refreshed or no longer needed, 2 when the refresh token was revoked or expired (log in to the agent
      again), 1 on other failures. Configuration errors exit 78. Tokens are never printed.

      Link \`scripts/providers/oauth-token\` into \`PULSE_PROVIDERS_DIR\` to have \`svc pulse keepalive\` and the
      daemon run it.
    `,
    examples: [
      ["Is the token fresh?", "svc pulse provider oauth check --environment /etc/svc/pulse.env"],
      ["Refresh it if it expires within the threshold", "svc pulse provider oauth refresh"],
    ],
  });

  envFile = withValueName(
    "file",
    Option.String("--environment,--env-file", { description: "Environment file (KEY=value lines)" }),
  );
  action = Option.String({ name: "check|refresh" });

  async execute(): Promise<number> {
    const { stdout, stderr } = this.context;
    if (this.action !== "check" && this.action !== "refresh") {
      stderr.write(`svc: unknown action ${JSON.stringify(this.action)}; use check or refresh\n`);
      return EXIT_USAGE;
    }
    const [{ Logger }, { checkCredential, OauthError, readOauthConfig, refreshCredential }] =
      await Promise.all([import("../../server/pulse/log.js"), import("../../server/pulse/oauth.js")]);
    try {
      const env = loadEnvironment(this.envFile, this.context.env);
      const reader = new ConfigReader(env);
      const config = readOauthConfig(reader);
      const level = reader.logLevel();
      reader.check();
      const logFile = reader.optional("LOG_FILE");
      const logger =
        logFile === undefined
          ? undefined
          : new Logger({
              level,
              file: logFile,
              stderr,
              component: "oauth-provider",
              secrets: [config.clientSecret],
            });
      if (this.action === "check") {
        const outcome = await checkCredential(config, { logger });
        stdout.write(`${outcome.message}\n`);
        return outcome.exitCode;
      }
      let announced = false;
      const outcome = await refreshCredential(config, {
        logger,
        onLockWait: (holder) => {
          if (announced) return;
          announced = true;
          stderr.write(
            `svc: waiting for the lock held by ${holder === undefined ? "another process" : `pid ${holder.pid}`}\n`,
          );
        },
      });
      stdout.write(`${outcome.message}\n`);
      return outcome.exitCode;
    } catch (error) {
      // The provider contract (keepalive.ts) wants 78 for configuration, 2 for a needed login, else 1.
      if (error instanceof ConfigError) {
        stderr.write(`svc: ${error.message}\n`);
        return EXIT_CONFIG;
      }
      if (error instanceof OauthError) {
        stderr.write(`svc: ${error.message}\n`);
        return error.exitCode;
      }
      stderr.write(failureReport(error, SVC_VERSION));
      return 1;
    }
  }
}
