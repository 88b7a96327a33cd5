import { Command, Option } from "clipanion";
import { UserFacingError } from "../../core/errors.js";
import { ConfigReader, DEFAULT_KEEP_DAYS, loadEnvironment } from "../../server/pulse/config.js";
import { EXIT, SvcCommand } from "../command.js";
import { withValueName } from "../command-spec.js";

/**
 * `svc pulse backup`: one online backup of PULSE_DB_PATH (Document 2 "Limits"). Exit 0 with the backup's
 * path on stdout; 78 (EX_CONFIG) for configuration problems (no PULSE_DB_PATH, old schema, unusable backup
 * directory); 2 when the copy fails or does not pass the integrity check.
 */
export class PulseBackupCommand extends SvcCommand {
  static override paths = [["pulse", "backup"]];

  static override usage = Command.Usage({
    category: "The pulse daemon",
    description: "Back up the pulse database while the daemon runs",
    details: `
      Copies PULSE_DB_PATH with SQLite's online backup API (the daemon may keep writing), runs
      \`PRAGMA integrity_check\` on the copy and only then names it \`pulse-<UTC yyyymmddThhmmssZ>.db\`
      (mode 0600) in the backup directory: \`--dir\`, else PULSE_BACKUP_DIR, else \`backups/\` beside the
      database. Then deletes backups named that way that are older than \`--keep-days\` (default 30) by the
      time in their name; other files in the directory are never touched.

      The database must be at the newest schema revision; after an upgrade of svc, run \`svc pulse migrate\`
      first. Exit status: 0 done, 2 the copy failed or is damaged (nothing written), 78 configuration.
    `,
    examples: [
      ["Back up with the deployed environment file", "svc pulse backup --environment /etc/svc/pulse.env"],
      [
        "Keep a week of backups in another directory",
        "svc pulse backup --dir /srv/backup/pulse --keep-days 7",
      ],
    ],
  });

  dir = withValueName(
    "dir",
    Option.String("--dir", {
      description: "Backup directory (default PULSE_BACKUP_DIR, else <db dir>/backups)",
    }),
  );
  keepDays = withValueName(
    "days",
    Option.String("--keep-days", {
      description: `Delete backups older than this many days (default ${DEFAULT_KEEP_DAYS})`,
    }),
  );
  envFile = withValueName(
    "file",
    Option.String("--environment,--env-file", {
      description: "Environment file (default PULSE_ENV_FILE)",
    }),
  );

  async run(): Promise<number> {
    const { backupPulseDb, defaultBackupDir } = await import("../../server/pulse/backup.js");
    let keepDays = DEFAULT_KEEP_DAYS;
    if (this.keepDays !== undefined) {
      keepDays = Number(this.keepDays);
      if (!/^\d+$/.test(this.keepDays) || keepDays < 1 || keepDays > 36_500) {
        throw new UserFacingError(
          "SVC_USAGE",
          `--keep-days ${JSON.stringify(this.keepDays)} is not a whole number of days from 1 to 36500; use for example --keep-days 30`,
        );
      }
    }
    const env = loadEnvironment(this.envFile);
    const reader = new ConfigReader(env);
    const dbPath = reader.required(
      "PULSE_DB_PATH",
      "set it in the environment file (see scripts/deploy/pulse.env.example) and pass --environment",
    );
    reader.check();
    const result = await backupPulseDb({
      dbPath,
      dir: this.dir ?? defaultBackupDir(env, dbPath),
      keepDays,
    });
    this.context.stdout.write(`${result.file}\n`);
    this.context.stdout.write(
      `integrity ok (${result.bytes} bytes, schema revision ${result.revision}, copied from ${dbPath})\n`,
    );
    for (const old of result.removed)
      this.context.stdout.write(`removed ${old} (older than ${keepDays} days)\n`);
    return EXIT.ok;
  }
}
