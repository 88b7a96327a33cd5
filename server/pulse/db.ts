/**
 * The pulse store's SQLite file (`PULSE_DB_PATH`; Document 2 "What the service does" 7, "Versioning"):
 * WAL, a 5 s busy timeout, `synchronous=NORMAL`, and the schema revisions `svc pulse migrate` applies.
 * The daemon opens the file with `openPulseDb(path, { migrate: false })` and refuses a file whose
 * revision is not the newest, naming the command to run.
 *
 * Times are epoch milliseconds (UTC) in INTEGER columns; `scheduled_at` and `executed_at` are also kept
 * as RFC 3339 text because Document 2 names them as the pulse's fields.
 */
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { Database } from "../../core/sqlite.js";
import { openStore } from "../../core/sqlite-store.js";
import { ConfigError } from "./config.js";

export const PULSE_SCHEMA_REVISION = 1;

const MIGRATIONS: Readonly<Record<number, string>> = {
  1: `
    CREATE TABLE pulses (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      prompt TEXT NOT NULL,
      source TEXT NOT NULL,
      priority TEXT NOT NULL CHECK (priority IN ('critical', 'high', 'normal', 'low', 'deferred')),
      priority_rank INTEGER NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled')),
      scheduled_at TEXT NOT NULL,
      -- when the pulse may next be claimed: the scheduled time, later after a failed attempt
      run_at INTEGER NOT NULL,
      dedup_key TEXT UNIQUE,
      attempt INTEGER NOT NULL DEFAULT 0,
      max_attempts INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      executed_at TEXT,
      claimed_at INTEGER,
      lease_until INTEGER,
      lease_token TEXT,
      owner TEXT,
      runner_pid INTEGER,
      finished_at INTEGER,
      exit_code INTEGER,
      signal TEXT,
      output_tail TEXT,
      last_error TEXT,
      backfilled INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX pulses_due ON pulses (status, priority_rank, run_at, id);
    CREATE INDEX pulses_lease ON pulses (status, lease_until);

    -- one row per claim; a released claim (runner unavailable, graceful stop) keeps its row with the
    -- outcome 'released' while the pulse's attempt counter is given back
    CREATE TABLE pulse_attempts (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      pulse_id INTEGER NOT NULL REFERENCES pulses (id),
      attempt INTEGER NOT NULL,
      lease_token TEXT NOT NULL UNIQUE,
      owner TEXT NOT NULL,
      started_at INTEGER NOT NULL,
      finished_at INTEGER,
      outcome TEXT,
      exit_code INTEGER,
      signal TEXT,
      duration_ms INTEGER,
      output_tail TEXT,
      error TEXT
    );
    CREATE INDEX pulse_attempts_pulse ON pulse_attempts (pulse_id, id);

    -- one row per built-in schedule (heartbeat, keepalive): the newest slot already handled
    CREATE TABLE schedules (
      name TEXT PRIMARY KEY,
      last_slot INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );

    -- live daemons; a row whose process is gone lets the next boot recover its pulses at once
    CREATE TABLE daemons (
      owner TEXT PRIMARY KEY,
      host TEXT NOT NULL,
      pid INTEGER NOT NULL,
      started_at INTEGER NOT NULL,
      seen_at INTEGER NOT NULL
    );
  `,
};

export interface OpenOptions {
  /** Bring the file to the newest revision (the `migrate` command); otherwise refuse an older one. */
  readonly migrate: boolean;
  /** Create the file (and its directory) when absent; `migrate` does, the daemon does not. */
  readonly create?: boolean;
  readonly readonly?: boolean;
  /**
   * How long a statement waits for another connection's lock (default 5 s). node:sqlite is synchronous,
   * so the wait blocks the event loop: the daemon uses a short one and retries on its next tick, and its API
   * answers 503 instead of freezing every other request.
   */
  readonly busyTimeoutMs?: number;
}

export class SchemaError extends ConfigError {}

/** Opens the pulse database with the pragmas every connection needs; the caller closes it. */
export function openPulseDb(path: string, options: OpenOptions): Database {
  if (path !== ":memory:" && !existsSync(path)) {
    if (!options.create) {
      throw new SchemaError([
        `PULSE_DB_PATH ${path} does not exist; create it with: svc pulse migrate (same environment file)`,
      ]);
    }
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw new ConfigError([
        `cannot create the directory of PULSE_DB_PATH ${path}: ${(error as NodeJS.ErrnoException).code}; check its permissions`,
      ]);
    }
  }
  return openStore(path, {
    readonly: options.readonly ?? false,
    busyTimeoutMs: options.busyTimeoutMs ?? 5000,
    schema: {
      migrations: MIGRATIONS,
      latest: PULSE_SCHEMA_REVISION,
      tooNew: (current) =>
        new SchemaError([
          `PULSE_DB_PATH ${path} has schema revision ${current}, newer than this svc knows (${PULSE_SCHEMA_REVISION}); ` +
            "run the svc version that wrote it, or restore the backup taken before the upgrade",
        ]),
      immediate: true,
      refuseOlder: options.migrate
        ? undefined
        : (current) =>
            new SchemaError([
              `PULSE_DB_PATH ${path} has schema revision ${current}, this svc needs ${PULSE_SCHEMA_REVISION}; ` +
                "back it up (svc pulse backup), then run: svc pulse migrate",
            ]),
    },
    cannotOpen: (error) =>
      new ConfigError([
        `cannot open PULSE_DB_PATH ${path}: ${error.message}; check the path and the permissions of its directory`,
      ]),
  });
}

/** The schema revision of the file at `path` without changing it; 0 for a new file. */
export function schemaRevision(path: string): number {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.pragma("user_version", { simple: true }) as number;
  } finally {
    db.close();
  }
}

/** True when `error` is SQLite saying another connection holds the lock (after the busy timeout). */
export function isBusy(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_LOCKED" || code === "SQLITE_BUSY_SNAPSHOT";
}
