/**
 * The bookkeeping tables of `cache.db`: the sync state (cursor, times, pack counter), HTTP validators, the
 * create journal, finished pushes, the history of main's moves and the append-only audit table; their row
 * types and statements prepared once per connection. The gateway that runs them is cache/db.ts.
 */
import type { Database } from "../core/sqlite.js";

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

/** Whether @oid is a tip main moved to, or a commit a push built on, up to main's last move to @tip. */
export const NOTED_BEFORE = `SELECT count(*) FROM tip_history WHERE (commit_oid = @oid OR pushed_commit = @oid)
  AND id <= (SELECT max(id) FROM tip_history WHERE commit_oid = @tip)`;

/** Sync and pack state, the create journal, finished pushes and the audit log. */
export function bookkeepingStatements(db: Database) {
  return {
    countCommit: db.prepare("UPDATE sync_state SET commits_since_pack = commits_since_pack + 1 WHERE id = 1"),
    commitsSincePack: db.prepare("SELECT commits_since_pack FROM sync_state WHERE id = 1").pluck(),
    packed: db.prepare("UPDATE sync_state SET commits_since_pack = 0 WHERE id = 1"),
    syncState: db.prepare(
      "SELECT cursor, last_sync_ms, last_full_ms, count_at_full FROM sync_state WHERE id = 1",
    ),
    collectionSyncState: db.prepare(
      "SELECT cursor, last_sync_ms, last_full_ms, count_at_full FROM collection_sync_state WHERE collection = ?",
    ),
    setCollectionSyncState: db.prepare(
      `UPDATE collection_sync_state SET cursor = @cursor, last_sync_ms = @last_sync_ms,
         last_full_ms = @last_full_ms, count_at_full = @count_at_full WHERE collection = @collection`,
    ),
    commentIdentity: db.prepare("SELECT me FROM collection_sync_state WHERE collection = 'comments'").pluck(),
    setCommentIdentity: db.prepare("UPDATE collection_sync_state SET me = ? WHERE collection = 'comments'"),
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
