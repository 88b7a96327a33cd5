/**
 * `cache.db` (DESIGN.md §3): the last known server state, the blob contents behind every OID we rendered,
 * the sync cursor, the create journal and the helper's append-only audit table. Migrated by
 * `PRAGMA user_version`; WAL; file mode 0600 (it holds record contents).
 */
import type { Validator } from "../backends/backend.js";
import { SvcError } from "../core/errors.js";
import type { Database } from "../core/sqlite.js";
import { openStore } from "../core/sqlite-store.js";

const SCHEMA_VERSION = 11;

/** `updated_at` in the form whose text order is time order to the second (`2026-01-31T12:00:00.000Z`). */
const CANONICAL_TIME = `substr(updated_at, 5, 1) = '-' AND substr(updated_at, 8, 1) = '-'
  AND substr(updated_at, 11, 1) = 'T' AND substr(updated_at, 14, 1) = ':' AND substr(updated_at, 17, 1) = ':'
  AND substr(updated_at, -1) = 'Z'`;

export const CACHE_MIGRATIONS: Record<number, string> = {
  1: `
    CREATE TABLE records (
      key TEXT PRIMARY KEY,
      path TEXT NOT NULL,
      version INTEGER,
      updated_at TEXT NOT NULL,
      rendered_oid TEXT NOT NULL,
      raw_json TEXT NOT NULL,
      deleted INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE oid_map (
      oid TEXT PRIMARY KEY,
      key TEXT NOT NULL,
      content BLOB NOT NULL,
      written INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX oid_map_unwritten ON oid_map (written) WHERE written = 0;
    CREATE TABLE sync_state (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      cursor TEXT,
      last_sync_ms INTEGER NOT NULL DEFAULT 0,
      last_full_ms INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO sync_state (id) VALUES (1);
    CREATE TABLE pending_creates (
      local_path TEXT NOT NULL,
      content_oid TEXT NOT NULL,
      created_key TEXT,
      created_at TEXT NOT NULL,
      PRIMARY KEY (local_path, content_oid)
    );
    CREATE TABLE pushes (
      user_commit TEXT PRIMARY KEY,
      result_commit TEXT NOT NULL
    );
    CREATE TABLE audit_events_cache (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      ts TEXT NOT NULL,
      op TEXT NOT NULL,
      backend TEXT NOT NULL,
      project TEXT NOT NULL,
      key TEXT,
      oid TEXT,
      bytes INTEGER,
      agent TEXT NOT NULL,
      detail TEXT
    );
    CREATE TRIGGER audit_events_cache_no_update BEFORE UPDATE ON audit_events_cache
      BEGIN SELECT RAISE(ABORT, 'audit_events_cache is append-only'); END;
    CREATE TRIGGER audit_events_cache_no_delete BEFORE DELETE ON audit_events_cache
      BEGIN SELECT RAISE(ABORT, 'audit_events_cache is append-only'); END;
  `,
  // The state tree kept incrementally (cache/state-tree.ts): the encoded tree of every directory as last
  // written, and the paths changed since. The triggers note every change of a live file, so no code path
  // that writes `records` can forget to; while no tree is kept (a new cache), nothing is noted.
  2: `
    CREATE TABLE state_trees (
      dir TEXT PRIMARY KEY,
      content BLOB NOT NULL
    );
    -- no key: an outer upsert's conflict handling would override a trigger's OR IGNORE; read DISTINCT
    CREATE TABLE state_dirty (
      path TEXT NOT NULL
    );
    CREATE INDEX records_live_path ON records (path) WHERE deleted = 0;
    CREATE INDEX records_live_updated ON records (updated_at) WHERE deleted = 0;
    CREATE TRIGGER records_dirty_insert AFTER INSERT ON records
      WHEN EXISTS (SELECT 1 FROM state_trees)
      BEGIN INSERT INTO state_dirty (path) VALUES (new.path); END;
    CREATE TRIGGER records_dirty_update AFTER UPDATE ON records
      WHEN (old.path IS NOT new.path OR old.rendered_oid IS NOT new.rendered_oid OR old.deleted IS NOT new.deleted)
        AND EXISTS (SELECT 1 FROM state_trees)
      BEGIN
        INSERT INTO state_dirty (path) VALUES (old.path);
        INSERT INTO state_dirty (path) VALUES (new.path);
      END;
    CREATE TRIGGER records_dirty_delete AFTER DELETE ON records
      WHEN EXISTS (SELECT 1 FROM state_trees)
      BEGIN INSERT INTO state_dirty (path) VALUES (old.path); END;
  `,
  // State commits written since the loose objects were last packed (cache.ts, consolidateIfDue).
  3: `
    ALTER TABLE sync_state ADD COLUMN commits_since_pack INTEGER NOT NULL DEFAULT 0;
  `,
  // The create journal by working tree and path (helper/create-journal.ts): a row is written before a POST
  // leaves, with what it sends and how far the records table reached, so a create whose answer was lost
  // can be found among the records that appeared after it. Old rows that got their key are kept, settled.
  4: `
    CREATE TABLE create_journal (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      worktree TEXT NOT NULL,
      path TEXT NOT NULL,
      content_oid TEXT NOT NULL,
      planned TEXT NOT NULL,
      started_at TEXT NOT NULL,
      known_rowid INTEGER NOT NULL,
      owner_pid INTEGER NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('sending', 'created', 'settled')),
      created_key TEXT,
      created_version INTEGER,
      created_updated_at TEXT
    );
    CREATE INDEX create_journal_path ON create_journal (path, state);
    INSERT INTO create_journal (worktree, path, content_oid, planned, started_at, known_rowid, owner_pid, state, created_key)
      SELECT '', local_path, content_oid, '{"fields":{}}', created_at, 0, 0, 'settled', created_key
      FROM pending_creates WHERE created_key IS NOT NULL;
    DROP TABLE pending_creates;
  `,
  // HTTP validators (ETags) of earlier answers, for conditional requests (the forge: a 304 costs no quota).
  // Those of a listing are written by the sync that applied it, in the same transaction.
  5: `
    CREATE TABLE validators (
      url TEXT PRIMARY KEY,
      etag TEXT NOT NULL,
      payload TEXT NOT NULL
    );
  `,
  // The history of the cache's main as this machine saw it (svc log, svc init --at): one row each time main
  // moved, with when and why, append-only like the audit table. Who made a version, where the backend says
  // (the wiki names the author of each page version), is kept with the version's blob. A cache made before
  // this revision gets the tips its audit rows name (syncs and pushes), so its history does not start empty.
  6: `
    CREATE TABLE tip_history (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      commit_oid TEXT NOT NULL,
      at_ms INTEGER NOT NULL,
      op TEXT NOT NULL,
      pushed_commit TEXT
    );
    CREATE TRIGGER tip_history_no_update BEFORE UPDATE ON tip_history
      BEGIN SELECT RAISE(ABORT, 'tip_history is append-only'); END;
    CREATE TRIGGER tip_history_no_delete BEFORE DELETE ON tip_history
      BEGIN SELECT RAISE(ABORT, 'tip_history is append-only'); END;
    ALTER TABLE oid_map ADD COLUMN changed_by TEXT;
    INSERT INTO tip_history (commit_oid, at_ms, op, pushed_commit)
      SELECT commit_oid, CAST(round((julianday(ts) - 2440587.5) * 86400000) AS INTEGER), op, pushed_commit FROM (
        SELECT id, ts, json_extract(detail, '$.commit') AS commit_oid, 'sync' AS op, NULL AS pushed_commit
          FROM audit_events_cache WHERE op = 'sync'
        UNION ALL
        SELECT id, ts, json_extract(detail, '$.result'), 'push', oid
          FROM audit_events_cache WHERE op = 'push-accept'
      ) WHERE commit_oid IS NOT NULL ORDER BY id;
  `,
  // Every state commit's time is the newest updated_at of the live records (cache/sync.ts): the greatest
  // canonical one comes from records_live_updated, the others from this index, which holds only them, so a
  // push does not read every record's time.
  7: `
    CREATE INDEX records_live_other_time ON records (updated_at) WHERE deleted = 0 AND NOT (${CANONICAL_TIME});
  `,
  // Each push asks whether a commit is in main's history (CacheDb.notedAncestor): looked up by index, so
  // the question costs the same after a hundred thousand moves of main as after ten.
  8: `
    CREATE INDEX IF NOT EXISTS tip_history_commit ON tip_history (commit_oid);
    CREATE INDEX IF NOT EXISTS tip_history_pushed ON tip_history (pushed_commit) WHERE pushed_commit IS NOT NULL;
  `,
  // How far a lazy fetch's prefetch has seen a user's objects folder (helper/stateless-connect.ts): every
  // blob of `oid_map` up to `through` (its rowid) was there or was sent, so the next lazy fetch looks only at
  // the blobs after it, instead of every blob the cache holds (~60-80 ms of each git pull at 10,000 records).
  // `repo` tells that folder from a new one made at the same path (its device and inode).
  9: `
    CREATE TABLE prefetch_marks (
      objects TEXT PRIMARY KEY,
      repo TEXT NOT NULL,
      through INTEGER NOT NULL
    );
  `,
  // `records.raw_json` (each record's fields as JSON, DESIGN.md §3) was written by every sync and push and
  // read by nothing: a record's content is its file (`rendered_oid`), which the renderer keeps lossless
  // and which the push parses (helper/push.ts). Making it cost ~30-45 ms of a 10,000-issue first listing
  // (its JSON.stringify, and its bytes in SQLite: ~40 % of the table) and kept a second copy that could
  // disagree with the file.
  10: `
    ALTER TABLE records DROP COLUMN raw_json;
  `,
  // How many live records the last complete full listing left (cache/sync.ts): a server whose count of
  // records lags behind its changes (the tracker's approximate count) is not taken for having deleted one
  // while it still says that number (issue 31).
  11: `
    ALTER TABLE sync_state ADD COLUMN count_at_full INTEGER;
  `,
};

/** Why the cache's main moved (tip_history.op). */
export type TipOp = "import" | "sync" | "push" | "continue" | "found-deleted";

/** One move of the cache's main (tip_history). */
export interface TipRow {
  readonly id: number;
  readonly commit_oid: string;
  readonly at_ms: number;
  readonly op: TipOp;
  /** For a push: the user's commit it carried. */
  readonly pushed_commit: string | null;
}

/** One create of the journal (`create_journal`). */
export interface JournalRow {
  readonly id: number;
  readonly path: string;
  readonly content_oid: string;
  /** The JSON of the `RecordChanges` the POST sent. */
  readonly planned: string;
  readonly known_rowid: number;
  readonly owner_pid: number;
  readonly created_key: string | null;
  readonly created_version: number | null;
  readonly created_updated_at: string | null;
}

/**
 * A record's last known server state; its content (fields and body) is its file, the rendered blob
 * (`oid_map.content` of `rendered_oid`), not stored twice.
 */
export interface CachedRecord {
  readonly key: string;
  readonly path: string;
  readonly version: number | null;
  readonly updated_at: string;
  readonly rendered_oid: string;
}

export interface SyncState {
  readonly cursor: string | null;
  readonly last_sync_ms: number;
  readonly last_full_ms: number;
  /**
   * How many records the server held at the last complete full listing: its own count where it gives one
   * (the sim's listing, the tracker's approximate count asked just before), else how many the listing found;
   * null before one.
   */
  readonly count_at_full: number | null;
}

export type AuditOp =
  | "connect"
  | "rpc"
  | "materialize"
  | "sync"
  | "sync-failed"
  | "blob-limit-refused"
  | "egress-denied"
  | "import"
  | "push-start"
  | "push-accept"
  | "push-reject"
  | "push-partial"
  | "write";

export interface AuditEvent {
  readonly op: AuditOp;
  readonly key?: string;
  readonly oid?: string;
  readonly bytes?: number;
  readonly detail?: Record<string, unknown>;
}

/** The records table: live records, their versions, paths and times. */
function recordStatements(db: Database) {
  return {
    record: db.prepare(
      "SELECT key, path, version, updated_at, rendered_oid FROM records WHERE key = ? AND deleted = 0",
    ),
    liveRecord: db.prepare(
      "SELECT version, updated_at, rendered_oid, path FROM records WHERE key = ? AND deleted = 0",
    ),
    versions: db.prepare(
      "SELECT key, version, updated_at, rendered_oid, path FROM records WHERE deleted = 0",
    ),
    upsertRecord: db.prepare(
      `INSERT INTO records (key, path, version, updated_at, rendered_oid, deleted)
       VALUES (?, ?, ?, ?, ?, 0)
       ON CONFLICT (key) DO UPDATE SET path = excluded.path, version = excluded.version,
         updated_at = excluded.updated_at, rendered_oid = excluded.rendered_oid, deleted = 0`,
    ),
    markDeleted: db.prepare("UPDATE records SET deleted = 1 WHERE key = ?"),
    tree: db.prepare("SELECT path, rendered_oid, updated_at FROM records WHERE deleted = 0"),
    treeByPath: db.prepare("SELECT path, rendered_oid FROM records WHERE deleted = 0 ORDER BY path"),
    liveCount: db.prepare("SELECT count(*) FROM records WHERE deleted = 0").pluck(),
    liveOidAt: db.prepare("SELECT rendered_oid FROM records WHERE path = ? AND deleted = 0").pluck(),
    newestCanonical: db
      .prepare(
        `SELECT updated_at FROM records WHERE deleted = 0 AND ${CANONICAL_TIME} ORDER BY updated_at DESC LIMIT 1`,
      )
      .pluck(),
    otherTimes: db
      .prepare(`SELECT updated_at FROM records WHERE deleted = 0 AND NOT (${CANONICAL_TIME})`)
      .pluck(),
    recordsAfter: db.prepare(
      "SELECT key, path, version, updated_at, rendered_oid FROM records WHERE rowid > ? AND deleted = 0",
    ),
  };
}

/** The blob contents (`oid_map`) and the stored state trees with their dirty paths. */
function objectStatements(db: Database) {
  return {
    stateTrees: db.prepare("SELECT dir, content FROM state_trees"),
    putStateTree: db.prepare(
      "INSERT INTO state_trees (dir, content) VALUES (?, ?) ON CONFLICT (dir) DO UPDATE SET content = excluded.content",
    ),
    dropStateTree: db.prepare("DELETE FROM state_trees WHERE dir = ?"),
    dropStateTrees: db.prepare("DELETE FROM state_trees"),
    dirtyPaths: db.prepare("SELECT DISTINCT path FROM state_dirty").pluck(),
    clearDirty: db.prepare("DELETE FROM state_dirty"),
    insertOid: db.prepare(
      "INSERT INTO oid_map (oid, key, content, changed_by) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
    ),
    changedBy: db.prepare(
      "SELECT oid, changed_by FROM oid_map WHERE changed_by IS NOT NULL AND oid IN (SELECT value FROM json_each(?))",
    ),
    oid: db.prepare("SELECT oid, content, written FROM oid_map WHERE oid = ?"),
    unwritten: db.prepare("SELECT oid FROM oid_map WHERE written = 0").pluck(),
    markWritten: db.prepare("UPDATE oid_map SET written = 1 WHERE oid IN (SELECT value FROM json_each(?))"),
    // `+written`: looked up by key, each; the index on `written` would make SQLite read every blob not
    // written yet (all of a clone's: ~3-8 ms of each lazy fetch at 10,000 records).
    unwrittenAmong: db
      .prepare("SELECT oid FROM oid_map WHERE +written = 0 AND oid IN (SELECT value FROM json_each(?))")
      .pluck(),
    knownAmong: db
      .prepare("SELECT count(*) FROM oid_map WHERE oid IN (SELECT value FROM json_each(?))")
      .pluck(),
    contents: db.prepare("SELECT oid, content FROM oid_map WHERE oid IN (SELECT value FROM json_each(?))"),
    prefetchCandidates: db
      .prepare(
        `SELECT o.oid, length(o.content) AS bytes, o.rowid AS id FROM oid_map o
           LEFT JOIN records r ON r.key = o.key AND r.rendered_oid = o.oid AND r.deleted = 0
         WHERE o.rowid > ?
         ORDER BY r.path IS NULL, r.path, o.rowid DESC`,
      )
      .raw(),
    prefetchMark: db.prepare("SELECT through FROM prefetch_marks WHERE objects = ? AND repo = ?").pluck(),
    lastBlobId: db.prepare("SELECT coalesce(max(rowid), 0) FROM oid_map").pluck(),
    setPrefetchMark: db.prepare(
      `INSERT INTO prefetch_marks (objects, repo, through) VALUES (?, ?, ?)
       ON CONFLICT (objects) DO UPDATE SET repo = excluded.repo, through = excluded.through`,
    ),
    blobCounts: db.prepare(
      `SELECT (SELECT count(*) FROM records WHERE deleted = 0) AS live,
              (SELECT count(DISTINCT rendered_oid) FROM records WHERE deleted = 0) AS distinct_live,
              (SELECT count(*) FROM oid_map) AS stored`,
    ),
    storedCount: db.prepare("SELECT count(*) FROM oid_map").pluck(),
    blobsAfter: db.prepare("SELECT rowid AS at, content FROM oid_map WHERE rowid > ? ORDER BY rowid LIMIT ?"),
  };
}

/** Whether @oid is a tip main moved to, or a commit a push built on, up to main's last move to @tip. */
export const NOTED_BEFORE = `SELECT count(*) FROM tip_history WHERE (commit_oid = @oid OR pushed_commit = @oid)
  AND id <= (SELECT max(id) FROM tip_history WHERE commit_oid = @tip)`;

/** Sync and pack state, the create journal, finished pushes and the audit log. */
function bookkeepingStatements(db: Database) {
  return {
    countCommit: db.prepare("UPDATE sync_state SET commits_since_pack = commits_since_pack + 1 WHERE id = 1"),
    commitsSincePack: db.prepare("SELECT commits_since_pack FROM sync_state WHERE id = 1").pluck(),
    packed: db.prepare("UPDATE sync_state SET commits_since_pack = 0 WHERE id = 1"),
    syncState: db.prepare(
      "SELECT cursor, last_sync_ms, last_full_ms, count_at_full FROM sync_state WHERE id = 1",
    ),
    validator: db.prepare("SELECT url, etag, payload FROM validators WHERE url = ?"),
    dropValidators: db.prepare("DELETE FROM validators WHERE substr(url, 1, length(@prefix)) = @prefix"),
    keepValidator: db.prepare(
      "INSERT INTO validators (url, etag, payload) VALUES (@url, @etag, @payload) ON CONFLICT (url) DO UPDATE SET etag = excluded.etag, payload = excluded.payload",
    ),
    setSyncState: db.prepare(
      `UPDATE sync_state SET cursor = @cursor, last_sync_ms = @last_sync_ms, last_full_ms = @last_full_ms,
         count_at_full = @count_at_full WHERE id = 1`,
    ),
    journalStart: db.prepare(
      `INSERT INTO create_journal (worktree, path, content_oid, planned, started_at, known_rowid, owner_pid, state)
       VALUES (?, ?, ?, ?, ?, (SELECT coalesce(max(rowid), 0) FROM records), ?, 'sending')`,
    ),
    journalCreated: db.prepare(
      "UPDATE create_journal SET state = 'created', created_key = ?, created_version = ?, created_updated_at = ? WHERE id = ?",
    ),
    journalDrop: db.prepare("DELETE FROM create_journal WHERE id = ? AND state = 'sending'"),
    journalRows: db.prepare(
      `SELECT id, path, content_oid, planned, known_rowid, owner_pid, created_key, created_version, created_updated_at
       FROM create_journal WHERE worktree = ? AND state = ? ORDER BY id`,
    ),
    journalSettledKey: db
      .prepare(
        `SELECT created_key FROM create_journal WHERE path = ? AND content_oid = ? AND state != 'sending'
         AND worktree IN (?, '') ORDER BY worktree = ? DESC, id DESC LIMIT 1`,
      )
      .pluck(),
    journalSettle: db.prepare("UPDATE create_journal SET state = 'settled', content_oid = ? WHERE id = ?"),
    journalClaimed: db
      .prepare("SELECT created_key FROM create_journal WHERE created_key IS NOT NULL")
      .pluck(),
    pushResult: db.prepare("SELECT result_commit FROM pushes WHERE user_commit = ?").pluck(),
    recordPush: db.prepare(
      "INSERT INTO pushes (user_commit, result_commit) VALUES (?, ?) ON CONFLICT (user_commit) DO UPDATE SET result_commit = excluded.result_commit",
    ),
    noteTip: db.prepare("INSERT INTO tip_history (commit_oid, at_ms, op, pushed_commit) VALUES (?, ?, ?, ?)"),
    tips: db.prepare("SELECT id, commit_oid, at_ms, op, pushed_commit FROM tip_history ORDER BY id"),
    notedBefore: db.prepare(NOTED_BEFORE).pluck(),
    audit: db.prepare(
      `INSERT INTO audit_events_cache (ts, op, backend, project, key, oid, bytes, agent, detail)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
  };
}

export class CacheDb {
  readonly db: Database;
  private readonly statements;
  /** Opened `building` (see the constructor). */
  private readonly building: boolean;

  /**
   * `building`: the database of a cache being built in a folder of its own (cache/open.ts), which no other
   * process opens and which is deleted if the build fails: no write-ahead log and no syncs to disk while
   * the first listing goes in (every page would otherwise be written twice), and a larger page cache. The
   * next open of the finished cache turns the log on.
   */
  constructor(
    path: string,
    private readonly identity: { backend: string; project: string; agent: string },
    options: { building?: boolean } = {},
  ) {
    this.building = options.building === true;
    this.db = openStore(path, {
      building: this.building,
      // A swarm of agents shares one cache: a writer waits for the others rather than failing.
      busyTimeoutMs: 30_000,
      fileMode: 0o600,
      schema: {
        migrations: CACHE_MIGRATIONS,
        latest: SCHEMA_VERSION,
        tooNew: (current) =>
          `the cache ${path} has schema revision ${current}, newer than this svc (${SCHEMA_VERSION}); upgrade svc or remove the cache folder`,
        // The write lock first: a revision another process ran meanwhile is then seen, and skipped.
        immediate: true,
      },
      cannotOpen: (error) =>
        new SvcError("SVC_STORE", `cannot open the cache database ${path}: ${error.message}`, {
          cause: error,
        }),
    });
    this.statements = {
      ...recordStatements(this.db),
      ...objectStatements(this.db),
      ...bookkeepingStatements(this.db),
    };
  }

  /** Runs `work` holding SQLite's write lock (BEGIN IMMEDIATE): one writer per cache across processes. */
  exclusive<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /**
   * For the first listing of a database opened `building`: drops the indexes of `records` and `oid_map`
   * that no insert needs (their keys stay), and returns what makes them again, exactly as the schema
   * wrote them. Each index built once from the whole table is cheaper than kept up record by record
   * (measured, 100,000 records: the inserts ~1,300 ms with them, ~950 ms without plus ~150 ms to build
   * them after). A database not opened `building` keeps its indexes; the returned function does nothing.
   */
  deferIndexes(): () => void {
    if (!this.building) return () => {};
    const indexes = this.db
      .prepare(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('records', 'oid_map')",
      )
      .all() as { name: string; sql: string }[];
    this.db.transaction(() => {
      for (const { name } of indexes) this.db.exec(`DROP INDEX "${name.replaceAll('"', '""')}"`);
    })();
    let restored = false;
    return () => {
      if (restored) return;
      restored = true;
      this.db.transaction(() => {
        for (const { sql } of indexes) this.db.exec(sql);
      })();
    };
  }

  record(key: string): CachedRecord | undefined {
    return this.statements.record.get(key) as CachedRecord | undefined;
  }

  /** key → {version, updated_at, rendered_oid, path} of every live record. */
  liveRecords(): Map<
    string,
    { version: number | null; updated_at: string; rendered_oid: string; path: string }
  > {
    const rows = this.statements.versions.all() as {
      key: string;
      version: number | null;
      updated_at: string;
      rendered_oid: string;
      path: string;
    }[];
    return new Map(rows.map((row) => [row.key, row]));
  }

  /** Like `liveRecords`, for the given keys only. */
  liveRecordsFor(
    keys: readonly string[],
  ): Map<string, { version: number | null; updated_at: string; rendered_oid: string; path: string }> {
    const found = new Map<
      string,
      { version: number | null; updated_at: string; rendered_oid: string; path: string }
    >();
    for (const key of keys) {
      const row = this.statements.liveRecord.get(key) as
        | { version: number | null; updated_at: string; rendered_oid: string; path: string }
        | undefined;
      if (row) found.set(key, row);
    }
    return found;
  }

  upsertRecord(record: CachedRecord): void {
    // Positional: binding by name looks up each of an object's properties (measured: ~1 µs a record more).
    const { key, path, version, updated_at, rendered_oid } = record;
    this.statements.upsertRecord.run(key, path, version, updated_at, rendered_oid);
  }

  markDeleted(key: string): void {
    this.statements.markDeleted.run(key);
  }

  /** (path, oid) of every live record: the tree of the cache's `main`. */
  treeEntries(): { path: string; rendered_oid: string; updated_at: string }[] {
    return this.statements.tree.all() as { path: string; rendered_oid: string; updated_at: string }[];
  }

  /**
   * (path, oid) of every live record in byte order of the path, read as it is iterated: git's order of a
   * tree's entries at every level (cache/state-tree.ts builds the trees in one pass over it).
   */
  treeEntriesByPath(): IterableIterator<{ path: string; rendered_oid: string }> {
    return this.statements.treeByPath.iterate() as IterableIterator<{ path: string; rendered_oid: string }>;
  }

  /** Counts a state commit written (each leaves a few loose objects, a tree of every record among them). */
  countStateCommit(): void {
    this.statements.countCommit.run();
  }

  commitsSincePack(): number {
    return this.statements.commitsSincePack.get() as number;
  }

  markPacked(): void {
    this.statements.packed.run();
  }

  liveCount(): number {
    return this.statements.liveCount.get() as number;
  }

  /** The blob of the live record at `path`, if one is there. */
  liveOidAt(path: string): string | undefined {
    return this.statements.liveOidAt.get(path) as string | undefined;
  }

  /**
   * The `updated_at` values that can hold the newest time of the live records: the greatest of those in
   * the canonical form (text order is time order to the second there) and every one in another form.
   */
  newestUpdateCandidates(): string[] {
    const canonical = this.statements.newestCanonical.get() as string | undefined;
    const others = this.statements.otherTimes.all() as string[];
    return canonical === undefined ? others : [canonical, ...others];
  }

  /** dir → encoded tree of the state tree as last written ("" is the root); empty when none is kept. */
  stateTrees(): Map<string, Buffer> {
    const rows = this.statements.stateTrees.all() as { dir: string; content: Buffer }[];
    return new Map(rows.map((row) => [row.dir, row.content]));
  }

  /** Paths of live files changed since the state tree was last written. */
  dirtyPaths(): string[] {
    return this.statements.dirtyPaths.all() as string[];
  }

  /**
   * Stores the state tree's directories as written (`replaceAll`: these are all of them) and forgets the
   * changes noted so far, in one transaction.
   */
  saveStateTrees(written: ReadonlyMap<string, Buffer>, removed: Iterable<string>, replaceAll: boolean): void {
    this.db.transaction(() => {
      if (replaceAll) this.statements.dropStateTrees.run();
      for (const dir of removed) this.statements.dropStateTree.run(dir);
      for (const [dir, content] of written) this.statements.putStateTree.run(dir, content);
      this.statements.clearDirty.run();
    })();
  }

  /** Keeps the contents of blob `oid` (record `key`'s file), and who made that version when the backend says. */
  rememberBlob(oid: string, key: string, content: Buffer, changedBy?: string): void {
    this.statements.insertOid.run(oid, key, content, changedBy ?? null);
  }

  /** oid → who made that version, for those of `oids` whose backend said. */
  changedBy(oids: readonly string[]): Map<string, string> {
    const rows = this.statements.changedBy.all(JSON.stringify(oids)) as { oid: string; changed_by: string }[];
    return new Map(rows.map((row) => [row.oid, row.changed_by]));
  }

  blob(oid: string): { oid: string; content: Buffer; written: number } | undefined {
    return this.statements.oid.get(oid) as { oid: string; content: Buffer; written: number } | undefined;
  }

  unwrittenBlobOids(): string[] {
    return this.statements.unwritten.all() as string[];
  }

  markWritten(oids: readonly string[]): void {
    this.statements.markWritten.run(JSON.stringify(oids));
  }

  /**
   * Of `oids`, how many are blobs the cache knows, and which of those it has not written yet: one query
   * each, however many wants a fetch has (a checkout of 10,000 files sends 10,000).
   */
  classifyWants(oids: readonly string[]): { known: number; unwritten: string[] } {
    const list = JSON.stringify(oids);
    return {
      known: this.statements.knownAmong.get(list) as number,
      unwritten: this.statements.unwrittenAmong.all(list) as string[],
    };
  }

  /**
   * Every blob the cache has stored after the one numbered `after` (0: all of them), with its size and
   * number, in the order a prefetch should send them: the live records' (the tip's tree) by path, then the
   * others (older versions, removed records) newest first. Each once. A blob two live records share counts
   * as live when the record it was stored for still has it.
   */
  prefetchCandidates(after = 0): { oid: string; bytes: number; id: number }[] {
    return (this.statements.prefetchCandidates.all(after) as [string, number, number][]).map(
      ([oid, bytes, id]) => ({ oid, bytes, id }),
    );
  }

  /** How far the prefetch has seen the objects folder `objects` of the repository `repo` (0: not at all). */
  prefetchMark(objects: string, repo: string): number {
    return (this.statements.prefetchMark.get(objects, repo) as number | undefined) ?? 0;
  }

  /** The number of the blob the cache stored last (0: none). */
  lastBlobId(): number {
    return this.statements.lastBlobId.get() as number;
  }

  setPrefetchMark(objects: string, repo: string, through: number): void {
    this.statements.setPrefetchMark.run(objects, repo, through);
  }

  /** The contents of the blobs `oids`, streamed in batches (order not kept). */
  *blobContents(oids: readonly string[], batch = 1000): Generator<{ oid: string; content: Buffer }> {
    for (let start = 0; start < oids.length; start += batch) {
      const rows = this.statements.contents.all(JSON.stringify(oids.slice(start, start + batch))) as {
        oid: string;
        content: Buffer;
      }[];
      yield* rows;
    }
  }

  /**
   * How many live records there are, how many distinct blobs they have, and how many blobs the database
   * holds. Every live record's blob is held (`rememberRecord` stores it before the record), so when the
   * three are equal the database holds exactly the live records' blobs, each record its own.
   */
  blobCounts(): { live: number; distinctLive: number; stored: number } {
    const row = this.statements.blobCounts.get() as { live: number; distinct_live: number; stored: number };
    return { live: row.live, distinctLive: row.distinct_live, stored: row.stored };
  }

  /** How many blobs the database holds. */
  storedBlobCount(): number {
    return this.statements.storedCount.get() as number;
  }

  /**
   * The contents of every blob the database holds, in the order they entered it, in batches of `batch`
   * rows (one query each: the caller may wait between them, and the connection stays free). Read in the
   * table's own order, with no lookup per row.
   */
  *storedBlobContents(batch = 1000): Generator<Buffer> {
    for (let after = 0; ; ) {
      const rows = this.statements.blobsAfter.all(after, batch) as { at: number; content: Buffer }[];
      for (const row of rows) yield row.content;
      const last = rows[rows.length - 1];
      if (last === undefined || rows.length < batch) return;
      after = last.at;
    }
  }

  /**
   * Notes that the create of `path` (blob `oid` in the pushed commit of working tree `worktree`) is about to
   * be sent, with what it sends; returns the row's id. Written before the request leaves.
   */
  journalStart(worktree: string, path: string, oid: string, planned: string): number {
    const result = this.statements.journalStart.run(
      worktree,
      path,
      oid,
      planned,
      new Date().toISOString(),
      process.pid,
    );
    return Number(result.lastInsertRowid);
  }

  /** The server created record `key` (at `version` / `updatedAt`) for journal row `id`. */
  journalCreated(id: number, key: string, version: number | null, updatedAt: string): void {
    this.statements.journalCreated.run(key, version, updatedAt, id);
  }

  /** Forgets a create that is proven unwritten (the server refused it, or no record of it appeared). */
  journalDrop(id: number): void {
    this.statements.journalDrop.run(id);
  }

  /** The rows of `worktree` in `state`: `sending` (answer unknown) or `created` (push not finished). */
  journalRows(worktree: string, state: "sending" | "created"): JournalRow[] {
    return this.statements.journalRows.all(worktree, state) as JournalRow[];
  }

  /** The key an earlier push created from the file `path` with content `oid`, if any. */
  createdKey(worktree: string, path: string, oid: string): string | undefined {
    const key = this.statements.journalSettledKey.get(path, oid, worktree, worktree) as
      | string
      | null
      | undefined;
    return key ?? undefined;
  }

  /** The push that carried row `id` finished: its file is `oid` in that push's commit. */
  journalSettle(id: number, oid: string): void {
    this.statements.journalSettle.run(oid, id);
  }

  /** Every key the journal has given to a create: a record can be the result of one create only. */
  journalClaimedKeys(): Set<string> {
    return new Set(this.statements.journalClaimed.all() as string[]);
  }

  /** Live records that entered the cache after the records table reached `rowid`. */
  recordsAfter(rowid: number): CachedRecord[] {
    return this.statements.recordsAfter.all(rowid) as CachedRecord[];
  }

  /** The commit a push of `userCommit` produced (the user's commit plus what the server assigned). */
  pushResult(userCommit: string): string | undefined {
    return (this.statements.pushResult.get(userCommit) as string | undefined) ?? undefined;
  }

  recordPush(userCommit: string, resultCommit: string): void {
    this.statements.recordPush.run(userCommit, resultCommit);
  }

  syncState(): SyncState {
    return this.statements.syncState.get() as SyncState;
  }

  setSyncState(state: SyncState): void {
    this.statements.setSyncState.run(state);
  }

  validator(url: string): Validator | undefined {
    return this.statements.validator.get(url) as Validator | undefined;
  }

  /** Drops the validators of every URL that starts with `prefix`. */
  dropValidators(prefix: string): void {
    this.statements.dropValidators.run({ prefix });
  }

  keepValidator(validator: Validator): void {
    this.statements.keepValidator.run({
      url: validator.url,
      etag: validator.etag,
      payload: validator.payload,
    });
  }

  /** Notes that main moved to `commit` now, and why; call it in the transaction that moves it. */
  noteTip(commit: string, op: TipOp, pushedCommit?: string): void {
    this.statements.noteTip.run(commit, Date.now(), op, pushedCommit ?? null);
  }

  /**
   * Whether this cache's history says that `oid` is `tip` or an ancestor of it: `oid` was noted, up to the
   * last time main moved to `tip`, as a tip main moved to or as the user's commit a push built its result
   * on. Main only ever moves to a commit that has the old tip among its ancestors (every commit the cache
   * writes has the tip, or a user's commit containing it, as a parent), and a push's result has the user's
   * commit as a parent; so each of those is an ancestor of `tip`. False says nothing: an older commit of a
   * user's pushed history is an ancestor too, unnoted.
   */
  notedAncestor(oid: string, tip: string): boolean {
    return (this.statements.notedBefore.get({ oid, tip }) as number) > 0;
  }

  /** Every move of main this cache noted, oldest first. */
  tips(): TipRow[] {
    return this.statements.tips.all() as TipRow[];
  }

  audit(event: AuditEvent): void {
    this.statements.audit.run(
      new Date().toISOString(),
      event.op,
      this.identity.backend,
      this.identity.project,
      event.key ?? null,
      event.oid ?? null,
      event.bytes ?? null,
      this.identity.agent,
      event.detail === undefined ? null : JSON.stringify(event.detail),
    );
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
