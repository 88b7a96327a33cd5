/**
 * The records table of `cache.db`: each record's last known server state (its key, path, version, time and
 * rendered blob), its statements prepared once per connection. The gateway that runs them is cache/db.ts.
 */
import type { Database } from "../core/sqlite.js";
import { CANONICAL_TIME } from "./db-schema.js";

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

/** The records table: live records, their versions, paths and times. */
export function recordStatements(db: Database) {
  return {
    record: db.prepare(
      "SELECT key, path, version, updated_at, rendered_oid FROM records WHERE key = ? AND deleted = 0",
    ),
    liveRecord: db.prepare(
      "SELECT version, updated_at, rendered_oid, path FROM records WHERE key = ? AND deleted = 0",
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
    // A collection's rows: comments are keyed `comment:<id>` (backends/comment.ts), records never hold a colon.
    collectionVersions: db.prepare(
      `SELECT key, version, updated_at, rendered_oid, path FROM records
       WHERE deleted = 0 AND (substr(key, 1, 8) = 'comment:') = @comments`,
    ),
    collectionCount: db
      .prepare(
        "SELECT count(*) FROM records WHERE deleted = 0 AND (substr(key, 1, 8) = 'comment:') = @comments",
      )
      .pluck(),
    keyAt: db.prepare("SELECT key FROM records WHERE path = ? AND deleted = 0").pluck(),
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
