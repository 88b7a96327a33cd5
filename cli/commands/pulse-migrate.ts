import { existsSync } from "node:fs";
import { Command, Option } from "clipanion";
import { ConfigError, ConfigReader, loadEnvironment } from "../../server/pulse/config.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

/**
 * `svc pulse migrate`: brings PULSE_DB_PATH to the newest schema revision, creating the file when absent.
 * The explicit upgrade step of Document 2 "Versioning"; the daemon never migrates by itself. Idempotent.
 * Exit 0 done or nothing to do; 78 (EX_CONFIG) for configuration problems, including a file written by a
 * newer svc.
 */
export class PulseMigrateCommand extends SvcCommand {
  static override paths = [["pulse", "migrate"]];

  static override usage = Command.Usage({
    category: "The pulse daemon",
    description: "Bring the pulse database to the newest schema revision",
    details: `
      Creates PULSE_DB_PATH (and its directory) when absent and applies every schema revision it lacks,
      each in one transaction. Run it with the daemon and the listener stopped, after \`svc pulse backup\`
      (see scripts/deploy/README.md for the upgrade order). Running it again changes nothing.
    `,
    examples: [["Migrate the deployed database", "svc pulse migrate --environment /etc/svc/pulse.env"]],
  });

  envFile = withValueName(
    "file",
    Option.String("--environment,--env-file", {
      description: "Environment file (default PULSE_ENV_FILE)",
    }),
  );

  async run(): Promise<number> {
    const { openPulseDb, schemaRevision } = await import("../../server/pulse/db.js");
    const reader = new ConfigReader(loadEnvironment(this.envFile));
    const dbPath = reader.required(
      "PULSE_DB_PATH",
      "set it in the environment file (see scripts/deploy/pulse.env.example) and pass --environment",
    );
    reader.check();
    const before = existsSync(dbPath) ? revisionOf(dbPath, schemaRevision) : 0;
    const db = openPulseDb(dbPath, { migrate: true, create: true });
    let after: number;
    try {
      after = db.pragma("user_version", { simple: true }) as number;
    } finally {
      db.close();
    }
    this.context.stdout.write(
      before === after
        ? `pulse database ${dbPath}: already at revision ${after}\n`
        : `pulse database ${dbPath}: schema revision ${before} -> ${after}\n`,
    );
    return EXIT.ok;
  }
}

function revisionOf(dbPath: string, schemaRevision: (path: string) => number): number {
  try {
    return schemaRevision(dbPath);
  } catch (error) {
    throw new ConfigError([
      `cannot read PULSE_DB_PATH ${dbPath} (${(error as Error).message}); check that it names the pulse database and that it is readable`,
    ]);
  }
}
