/**
 * Online backup of the pulse database (Document 2 "Limits": daily at 03:00, backups older than 30 days
 * deleted; notes row 13 and failure mode 11). `svc pulse backup` and the `svc-pulse-backup.timer` unit call
 * `backupPulseDb`; the daemon may keep writing while it runs.
 *
 * Contract: a file named `pulse-<UTC yyyymmddThhmmssZ>.db` appears in the backup directory only once it is
 * complete, on disk (fsynced) and has passed `PRAGMA integrity_check`; a failed run leaves nothing behind
 * but, if the process is killed mid-copy, a `.pulse-backup-*.tmp` file that retention never touches.
 * Retention deletes only files whose whole name matches that pattern, by the time in the name (not mtime,
 * which a restore or a copy between hosts changes).
 */
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fsyncPath } from "../../core/atomic-file.js";
import { SvcError, UserFacingError } from "../../core/errors.js";
import { Database } from "../../core/sqlite.js";
import { integrityProblems } from "../../core/sqlite-store.js";
import { ConfigError, DEFAULT_KEEP_DAYS } from "./config.js";
import { openPulseDb, PULSE_SCHEMA_REVISION } from "./db.js";

const DAY_MS = 86_400_000;
const BACKUP_NAME = /^pulse-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.db$/;

export interface BackupOptions {
  /** The live database (`PULSE_DB_PATH`); it must exist and be at the newest schema revision. */
  readonly dbPath: string;
  /** Created with mode 0700 when absent. */
  readonly dir: string;
  /** Backups whose name is more than this many days older than `now()` are deleted (default 30). */
  readonly keepDays?: number;
  readonly now?: () => number;
}

export interface BackupResult {
  /** The new backup: `<dir>/pulse-<UTC yyyymmddThhmmssZ>.db`, mode 0600, a single file (rollback journal mode). */
  readonly file: string;
  readonly bytes: number;
  readonly integrity: "ok";
  readonly revision: number;
  /** Old backups deleted by retention, as paths. */
  readonly removed: readonly string[];
}

/** The copy failed `PRAGMA integrity_check`, or SQLite failed while copying; no backup file was written. */
export class BackupError extends UserFacingError {
  constructor(message: string, data: Record<string, unknown>, cause?: unknown) {
    super("SVC_STORE", message, { data, cause });
  }
}

/** `PULSE_BACKUP_DIR`, else `<dirname(PULSE_DB_PATH)>/backups`. */
export function defaultBackupDir(env: Readonly<Record<string, string | undefined>>, dbPath: string): string {
  const configured = env.PULSE_BACKUP_DIR?.trim();
  return configured ? configured : join(dirname(dbPath), "backups");
}

/** `pulse-20260115T030000Z.db` for 2026-01-15 03:00:00.xxx UTC. */
export function backupFileName(epochMs: number): string {
  const iso = new Date(epochMs).toISOString(); // 2026-01-15T03:00:00.123Z
  return `pulse-${iso.slice(0, 19).replace(/[-:]/g, "")}Z.db`;
}

/** The UTC time in a backup's name, or undefined when the name is not exactly a backup name. */
export function backupTimestamp(name: string): number | undefined {
  const m = BACKUP_NAME.exec(name);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  // Date.UTC rolls 2026-02-30 over to March; such a name was not written by us.
  return backupFileName(ms) === name ? ms : undefined;
}

/** Deletes `pulse-<time>.db` files in `dir` whose name time is more than `keepDays` before `nowMs`. */
export function pruneBackups(dir: string, keepDays: number, nowMs: number): string[] {
  const removed: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const time = backupTimestamp(name);
    if (time === undefined || nowMs - time <= keepDays * DAY_MS) continue;
    const path = join(dir, name);
    try {
      unlinkSync(path);
      removed.push(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw new ConfigError([
        `cannot delete the old backup ${path} (${(error as NodeJS.ErrnoException).code}); ` +
          `the new backup was written; give the backup user write permission on ${dir}`,
      ]);
    }
  }
  return removed;
}

/**
 * Copies the live database with SQLite's online backup API, checks the copy and publishes it atomically.
 *
 * The source is a read-write connection (`openPulseDb(path, {migrate: false})`, which also refuses an old
 * schema naming `svc pulse migrate`). A readonly connection works with WAL too, but measured: when it is the
 * only connection (the upgrade procedure backs up with the daemon stopped) it leaves `-wal`/`-shm` files
 * behind, because only a writer may checkpoint and delete them on close; a read-write connection cleans up.
 * It never writes pages: the backup only reads.
 */
export async function backupPulseDb(options: BackupOptions): Promise<BackupResult> {
  const keepDays = options.keepDays ?? DEFAULT_KEEP_DAYS;
  const now = options.now ?? Date.now;
  if (!Number.isSafeInteger(keepDays) || keepDays < 1) {
    throw new UserFacingError(
      "SVC_USAGE",
      `keep-days must be a whole number of days, at least 1; got ${keepDays}`,
    );
  }
  const { dbPath, dir } = options;
  const source = openPulseDb(dbPath, { migrate: false });
  let tmp: string;
  try {
    tmp = createTempFile(dir);
    try {
      // Copy every remaining page in one step: SQLite restarts a stepwise backup whenever another
      // connection writes the source, so under steady writes 100-page steps might never finish. One step
      // reads a single WAL snapshot and does not block the daemon's writers.
      await source.backup(tmp);
    } catch (error) {
      removeDatabaseFiles(tmp);
      throw new BackupError(
        `copying PULSE_DB_PATH ${dbPath} to ${dir} failed: ${(error as Error).message}; ` +
          "no backup was written (check free space in the backup directory), then run svc pulse backup again",
        { dbPath, dir },
        error,
      );
    }
  } finally {
    source.close();
  }

  let revision: number;
  try {
    revision = checkCopy(tmp, dbPath);
    fsyncPath(tmp);
  } catch (error) {
    removeDatabaseFiles(tmp);
    throw error;
  }

  const file = join(dir, backupFileName(now()));
  publish(tmp, file);
  fsyncPath(dir);
  const bytes = statSync(file).size;
  const removed = pruneBackups(dir, keepDays, now());
  return { file, bytes, integrity: "ok", revision, removed };
}

function createTempFile(dir: string): string {
  const fix =
    `make ${dir} a directory writable by the user running the backup (the units run as svc: ` +
    `install -d -o svc -g svc -m 0700 ${dir}), or choose another with --dir or PULSE_BACKUP_DIR`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new ConfigError([`cannot create the backup directory ${dir} (${errorCode(error)}); ${fix}`]);
  }
  const tmp = join(dir, `.pulse-backup-${process.pid}-${randomBytes(4).toString("hex")}.tmp`);
  try {
    // Created empty with 0600 before SQLite writes a byte, so the copy is never readable by others;
    // SQLite gives its journal the same mode. An empty file is a valid empty database.
    closeSync(openSync(tmp, "wx", 0o600));
  } catch (error) {
    const code = errorCode(error);
    const why = code === "ENOSPC" ? "its file system is full" : code;
    throw new ConfigError([`cannot write in the backup directory ${dir} (${why}); ${fix}`]);
  }
  return tmp;
}

/** Turns the copy into a self-contained file and checks it; returns its schema revision. */
function checkCopy(tmp: string, dbPath: string): number {
  let problems: string[];
  let revision = -1;
  try {
    const copy = new Database(tmp, { fileMustExist: true });
    try {
      // The backup copies the WAL flag in the header; rollback mode keeps the backup one file, which is
      // what the restore procedure copies. The daemon switches the restored file back to WAL.
      copy.pragma("journal_mode = DELETE");
      problems = integrityProblems(copy);
      revision = copy.pragma("user_version", { simple: true }) as number;
    } finally {
      copy.close();
    }
  } catch (error) {
    // Damage bad enough makes SQLite throw SQLITE_CORRUPT instead of listing problems.
    problems = [(error as Error).message];
  }
  if (problems.length > 0) {
    const shown =
      problems.slice(0, 5).join("; ") + (problems.length > 5 ? `; … (${problems.length} problems)` : "");
    throw new BackupError(
      `the copy of PULSE_DB_PATH ${dbPath} failed PRAGMA integrity_check (${shown}); no backup was written. ` +
        `The live database may be damaged: stop the daemon, run sqlite3 ${dbPath} 'PRAGMA integrity_check;', ` +
        "and if it is not ok restore the newest good backup (scripts/deploy/README.md, Rollback)",
      { dbPath, problems },
    );
  }
  if (revision !== PULSE_SCHEMA_REVISION) {
    throw new BackupError(
      `the copy of PULSE_DB_PATH ${dbPath} has schema revision ${revision}, expected ${PULSE_SCHEMA_REVISION}; ` +
        "no backup was written. Was the database migrated during the backup? Run svc pulse backup again",
      { dbPath, revision },
    );
  }
  return revision;
}

/** Gives `tmp` its final name without ever replacing an existing backup. */
function publish(tmp: string, file: string): void {
  try {
    linkSync(tmp, file); // fails with EEXIST instead of overwriting, unlike rename
    unlinkSync(tmp);
    return;
  } catch (error) {
    const code = errorCode(error);
    if (code === "EEXIST") {
      removeDatabaseFiles(tmp);
      throw new BackupError(
        `the backup ${file} already exists (two backups in the same second?); run svc pulse backup again`,
        { file },
      );
    }
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") {
      removeDatabaseFiles(tmp);
      throw new SvcError("SVC_STORE", `cannot name the backup ${file}: ${code}`, { cause: error });
    }
  }
  // File systems without hard links: rename, after checking that nothing would be replaced.
  if (existsSync(file)) {
    removeDatabaseFiles(tmp);
    throw new BackupError(`the backup ${file} already exists; run svc pulse backup again`, { file });
  }
  renameSync(tmp, file);
}

function removeDatabaseFiles(path: string): void {
  for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}
