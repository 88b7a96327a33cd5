/**
 * Opening one of svc's SQLite files (the cache's `cache.db`, the simulator's store, the pulse database):
 * the one place that sets their pragmas (write-ahead log, syncs, busy timeout, foreign keys), runs their
 * schema migrations by `PRAGMA user_version`, and reads `PRAGMA integrity_check`. Where the stores differ,
 * on purpose, they say so through the options: the cache waits 30 s for a lock (a swarm of agents shares
 * one cache) and builds a new cache without a log; the pulse CLI opens its file read-only.
 *
 * The binding itself (node:sqlite behind the better-sqlite3 API svc was written against) is core/sqlite.ts.
 */
import { chmodSync, existsSync } from "node:fs";
import { SvcError } from "./errors.js";
import { Database } from "./sqlite.js";

export interface MigrateOptions {
  /**
   * Called when the file is older than `latest`, before anything is changed: an error returned is thrown
   * instead of migrating (the pulse daemon refuses an old file and names `svc pulse migrate`).
   */
  readonly refuseOlder?: (current: number) => Error | undefined;
  /** Each revision in a BEGIN IMMEDIATE transaction (the write lock first) instead of a deferred one. */
  readonly immediate?: boolean;
}

/** A store's schema: its revisions, the newest, and what to say of a file newer than that. */
export interface Schema extends MigrateOptions {
  readonly migrations: Readonly<Record<number, string>>;
  readonly latest: number;
  /** The message of the SVC_STORE error thrown for a file of revision `current` > `latest`, or the error. */
  readonly tooNew: (current: number) => string | Error;
}

export interface StoreOptions {
  /**
   * Open read-only: no journal or sync pragmas are written. The schema's revision is still checked: a file
   * older than it is refused by `refuseOlder`, or fails at the first write of its migration.
   */
  readonly readonly?: boolean;
  /** How long a statement waits for another connection's lock before SQLITE_BUSY; default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /**
   * `building`: a file that no other process opens and that is deleted if what fills it fails (a cache
   * being built, cache/open.ts): no write-ahead log and no syncs to disk (every page would otherwise be
   * written twice), and a page cache of 64 MiB instead of SQLite's 2 MiB. Otherwise WAL with
   * `synchronous=NORMAL`: a crash loses at most the last transactions, never the file.
   */
  readonly building?: boolean;
  /** The mode of a file this call creates (`0o600`: the cache holds record contents). */
  readonly fileMode?: number;
  /** Brought to its newest revision. */
  readonly schema?: Schema;
  /** The error thrown when SQLite cannot open the file at all, made from SQLite's. */
  readonly cannotOpen: (error: Error) => Error;
}

/**
 * Opens the SQLite file `path` (`:memory:` too) with the pragmas of `options`, migrated to its schema's
 * newest revision; the caller closes it. A failure after the file is open closes it and is thrown as is.
 */
export function openStore(path: string, options: StoreOptions): Database {
  const fresh = options.fileMode !== undefined && path !== ":memory:" && !existsSync(path);
  const busyTimeoutMs = Math.round(options.busyTimeoutMs ?? 5000);
  let db: Database;
  try {
    db = new Database(path, { readonly: options.readonly === true, timeout: busyTimeoutMs });
  } catch (error) {
    throw options.cannotOpen(error as Error);
  }
  try {
    if (fresh && options.fileMode !== undefined) chmodSync(path, options.fileMode);
    if (!options.readonly) {
      db.pragma(options.building ? "journal_mode = MEMORY" : "journal_mode = WAL");
      db.pragma(options.building ? "synchronous = OFF" : "synchronous = NORMAL");
      // A first listing of 1,000,000 records inserts blob ids in random order: the larger page cache keeps
      // the index pages in memory.
      if (options.building) db.pragma("cache_size = -65536");
    }
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    db.pragma("foreign_keys = ON");
    const schema = options.schema;
    if (schema !== undefined) {
      migrateSchema(db, schema.migrations, schema.latest, schema.tooNew, schema);
    }
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * What `PRAGMA integrity_check` finds wrong with `db`: empty when it says `ok`. Damage bad enough makes
 * SQLite throw (SQLITE_CORRUPT) instead of listing problems: that is one problem, SQLite's message.
 */
export function integrityProblems(db: Database): string[] {
  let said: string[];
  try {
    said = (db.pragma("integrity_check") as { integrity_check: string }[]).map((row) => row.integrity_check);
  } catch (error) {
    return [(error as Error).message];
  }
  return said.length === 1 && said[0] === "ok" ? [] : said;
}

/**
 * The one schema-migration runner (the cache, the simulator's store, the pulse database): brings `db` to
 * revision `latest` (SQLite's `user_version`) by running each missing migration in its own transaction. A
 * file of a newer revision is refused: this svc cannot know its shape. `tooNew(current)` gives the message
 * of the SVC_STORE error thrown, or the error itself.
 */
export function migrateSchema(
  db: Database,
  migrations: Readonly<Record<number, string>>,
  latest: number,
  tooNew: (current: number) => string | Error,
  options: MigrateOptions = {},
): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > latest) {
    const refusal = tooNew(current);
    throw typeof refusal === "string" ? new SvcError("SVC_STORE", refusal) : refusal;
  }
  if (current < latest) {
    const refusal = options.refuseOlder?.(current);
    if (refusal !== undefined) throw refusal;
  }
  for (let revision = current + 1; revision <= latest; revision++) {
    const step = db.transaction(() => {
      // Another process may have run this revision since `current` was read (a swarm of agents that each
      // open a cache an older svc made): it is not run twice (a second DROP COLUMN or CREATE TABLE fails).
      if ((db.pragma("user_version", { simple: true }) as number) >= revision) return;
      db.exec(migrations[revision] ?? "");
      db.pragma(`user_version = ${revision}`);
    });
    if (options.immediate) step.immediate();
    else step();
  }
}
