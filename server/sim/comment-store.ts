/**
 * The simulator's comments (an extension of Document 1, issue 34; docs/sim.md "Comments"): their table,
 * and the reads and writes of them, on the store's database and under its rules (store.ts): every write
 * in one transaction, timestamps from the store's one clock, listings as snapshots.
 *
 * Comment ids come from one sequence per simulator (all projects), starting at 1000000001 and never handed
 * out again, so that a thread's files (`comments/0042/<id>.md`) list in order. A comment belongs to one
 * issue; deleting the issue deletes its comments (a trigger, so no path can leave orphans). Writing a
 * comment leaves its issue's `updated_at` and `version` as they are.
 */
import type { Database } from "../../core/sqlite.js";

/** Schema revision 3 of the store: the comments, their id sequence, the cascade from issues. */
export const COMMENTS_MIGRATION = `
  CREATE TABLE comments (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    issue_id INTEGER NOT NULL,
    author TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    version INTEGER NOT NULL
  );
  CREATE INDEX comments_by_issue ON comments (project, issue_id);
  CREATE INDEX comments_by_update ON comments (project, updated_at);
  CREATE TABLE comment_ids (last_comment_id INTEGER NOT NULL);
  INSERT INTO comment_ids VALUES (1000000000);
  CREATE TRIGGER issues_delete_comments AFTER DELETE ON issues
    BEGIN DELETE FROM comments WHERE project = OLD.project AND issue_id = OLD.id; END;
`;

/** A comment as the simulator stores and sends it. */
export interface SimComment {
  readonly id: number;
  readonly issue_id: number;
  readonly author: string;
  readonly body: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly version: number;
}

export type CommentOutcome =
  | { readonly kind: "ok"; readonly comment: SimComment }
  | { readonly kind: "not_found" }
  | { readonly kind: "version_mismatch"; readonly current: number };

export type CommentDeleteOutcome = { readonly kind: "ok" } | Exclude<CommentOutcome, { kind: "ok" }>;

/** What the comments use of their store (store.ts): its clock, its transactions, its snapshots. */
export interface StoreContext {
  readonly timestamp: () => string;
  readonly timestampAfter: (previous: string) => string;
  readonly atomically: <T>(work: () => T) => T;
  readonly snapshot: <Row, T>(
    sql: string,
    parameters: readonly unknown[],
    map: (row: Row) => T,
  ) => Generator<T>;
}

const COLUMNS = "id, issue_id, author, body, created_at, updated_at, version";

/** A row as it comes out of SQLite (a null-prototype object) as a plain comment with the members in order. */
function toComment(row: SimComment): SimComment {
  return {
    id: row.id,
    issue_id: row.issue_id,
    author: row.author,
    body: row.body,
    created_at: row.created_at,
    updated_at: row.updated_at,
    version: row.version,
  };
}

export class SimComments {
  private readonly statements;

  constructor(
    db: Database,
    private readonly store: StoreContext,
  ) {
    this.statements = {
      nextId: db
        .prepare("UPDATE comment_ids SET last_comment_id = last_comment_id + 1 RETURNING last_comment_id")
        .pluck(),
      insert: db.prepare(
        `INSERT INTO comments (id, project, issue_id, author, body, created_at, updated_at, version)
         VALUES (@id, @project, @issue_id, @author, @body, @created_at, @updated_at, @version)`,
      ),
      get: db.prepare(`SELECT ${COLUMNS} FROM comments WHERE project = ? AND id = ?`),
      update: db.prepare(
        "UPDATE comments SET body = @body, updated_at = @updated_at, version = version + 1 WHERE id = @id",
      ),
      delete: db.prepare("DELETE FROM comments WHERE id = ?"),
      projectCount: db.prepare("SELECT count(*) FROM comments WHERE project = ?").pluck(),
      projectState: db
        .prepare(
          "SELECT count(*) || '.' || coalesce(max(id), 0) || '.' || coalesce(sum(version), 0) FROM comments WHERE project = ?",
        )
        .pluck(),
      issueCount: db.prepare("SELECT count(*) FROM comments WHERE project = ? AND issue_id = ?").pluck(),
    };
  }

  /**
   * A new comment on issue `issueId`, which the caller has found to exist (in the same transaction when it
   * matters: `SimStore.createComment`). `at` gives the seed loader its fixed timestamps.
   */
  create(
    slug: string,
    issueId: number,
    input: { author: string; body: string },
    at?: { created_at: string; updated_at: string; version: number },
  ): SimComment {
    const now = at?.created_at ?? this.store.timestamp();
    const id = this.statements.nextId.get() as number;
    this.statements.insert.run({
      id,
      project: slug,
      issue_id: issueId,
      author: input.author,
      body: input.body,
      created_at: now,
      updated_at: at?.updated_at ?? now,
      version: at?.version ?? 1,
    });
    return this.get(slug, id) as SimComment;
  }

  get(slug: string, id: number): SimComment | undefined {
    const row = this.statements.get.get(slug, id) as SimComment | undefined;
    return row && toComment(row);
  }

  /** Sets the body when `expectedVersion` is undefined (wildcard) or equals the stored version. */
  patch(slug: string, id: number, body: string, expectedVersion: number | undefined): CommentOutcome {
    return this.store.atomically((): CommentOutcome => {
      const row = this.get(slug, id);
      if (!row) return { kind: "not_found" };
      if (expectedVersion !== undefined && expectedVersion !== row.version) {
        return { kind: "version_mismatch", current: row.version };
      }
      this.statements.update.run({ id, body, updated_at: this.store.timestampAfter(row.updated_at) });
      return { kind: "ok", comment: this.get(slug, id) as SimComment };
    });
  }

  /** A real delete; the id is never handed out again. */
  delete(slug: string, id: number, expectedVersion: number | undefined): CommentDeleteOutcome {
    return this.store.atomically((): CommentDeleteOutcome => {
      const row = this.get(slug, id);
      if (!row) return { kind: "not_found" };
      if (expectedVersion !== undefined && expectedVersion !== row.version) {
        return { kind: "version_mismatch", current: row.version };
      }
      this.statements.delete.run(id);
      return { kind: "ok" };
    });
  }

  /** How many comments the project holds, or with `issueId` that issue (0 for either that does not exist). */
  /** Where the project's comments stand, as the issue listings say it (backends/sim/schema.ts `COMMENTS_STATE_HEADER`). */
  state(slug: string): string {
    return this.statements.projectState.get(slug) as string;
  }

  count(slug: string, issueId?: number): number {
    return (
      issueId === undefined
        ? this.statements.projectCount.get(slug)
        : this.statements.issueCount.get(slug, issueId)
    ) as number;
  }

  /**
   * The comments of the project, or with `issueId` of that issue, in id order (a thread's order), those
   * with `updated_at >= since` when `since` is given (already in the store's timestamp format); read as a
   * snapshot as they are iterated, like the issues listing.
   */
  snapshot(slug: string, options: { issueId?: number; since?: string } = {}): Generator<SimComment> {
    const where = ["project = ?"];
    const parameters: unknown[] = [slug];
    if (options.issueId !== undefined) {
      where.push("issue_id = ?");
      parameters.push(options.issueId);
    }
    if (options.since !== undefined) {
      where.push("updated_at >= ?");
      parameters.push(options.since);
    }
    return this.store.snapshot(
      `SELECT ${COLUMNS} FROM comments WHERE ${where.join(" AND ")} ORDER BY id`,
      parameters,
      toComment,
    );
  }
}
