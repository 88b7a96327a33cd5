/**
 * The schema of `cache.db` (DESIGN.md §3): its revisions, each a migration from the one before, with why it
 * was made. core/sqlite-store.ts runs the missing ones when a cache is opened (cache/db.ts). A new revision
 * is added at the end and named in the CHANGELOG of cache schema revisions; a revision once shipped is never
 * edited.
 */

/** The revision this svc writes; `PRAGMA user_version` holds a file's. */
export const SCHEMA_VERSION = 12;

/** `updated_at` in the form whose text order is time order to the second (`2026-01-31T12:00:00.000Z`). */
export const CANONICAL_TIME = `substr(updated_at, 5, 1) = '-' AND substr(updated_at, 8, 1) = '-'
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
  // and which the push parses (helper/push-changes.ts). Making it cost ~30-45 ms of a 10,000-issue first listing
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
  // Comments (issue 34) are rows of `records` keyed `comment:<id>`, listed by a listing of their own with
  // its own cursor and its own count (a delta compares comments with comments, never a sum with records):
  // the same state as `sync_state`, for the comments, and who the user is as comments name authors (asked
  // of the server once: helper/push-comments.ts). The CHECK keeps the table to the collections named here.
  12: `
    CREATE TABLE collection_sync_state (
      collection TEXT PRIMARY KEY CHECK (collection IN ('comments')),
      cursor TEXT,
      last_sync_ms INTEGER NOT NULL DEFAULT 0,
      last_full_ms INTEGER NOT NULL DEFAULT 0,
      count_at_full INTEGER,
      -- who the user is on the server, as comments name authors (JSON), asked once and kept
      me TEXT
    );
    INSERT INTO collection_sync_state (collection) VALUES ('comments');
  `,
};
