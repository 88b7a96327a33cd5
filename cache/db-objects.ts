/**
 * The object tables of `cache.db`: the blob contents behind every OID svc rendered (`oid_map`, with which
 * are written to the cache's repository), the stored state trees and their dirty paths, and how far a
 * prefetch has seen a user's objects folder; their statements prepared once per connection. The gateway
 * that runs them is cache/db.ts.
 */
import type { Database } from "../core/sqlite.js";

/** The blob contents (`oid_map`) and the stored state trees with their dirty paths. */
export function objectStatements(db: Database) {
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
