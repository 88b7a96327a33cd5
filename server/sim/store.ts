/**
 * The simulator's SQLite store (Document 1 "What the service does" 4, "Audit record"; DESIGN.md §5).
 *
 * One process serves one store. Every method is synchronous and runs inside one SQLite transaction where it
 * reads and writes, so two requests can never interleave: of two PATCHes with the same `If-Match`, exactly
 * one sees the version it expects.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { SimIssue, SimStatus } from "../../backends/sim/schema.js";
import { SvcError } from "../../core/errors.js";
import { Database } from "../../core/sqlite.js";
import { openStore } from "../../core/sqlite-store.js";
import { COMMENTS_MIGRATION, type SimComment, SimComments } from "./comment-store.js";

/** The schema revision this code writes. `PRAGMA user_version` holds the revision of a file. */
const SCHEMA_VERSION = 3;

const MIGRATIONS: Record<number, string> = {
  1: `
    CREATE TABLE projects (
      slug TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      description TEXT NOT NULL,
      created_at TEXT NOT NULL,
      last_issue_id INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE issues (
      project TEXT NOT NULL REFERENCES projects(slug),
      id INTEGER NOT NULL,
      title TEXT NOT NULL,
      status TEXT NOT NULL,
      labels TEXT NOT NULL,
      body TEXT NOT NULL,
      assignee TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      version INTEGER NOT NULL,
      PRIMARY KEY (project, id)
    ) WITHOUT ROWID;
    CREATE INDEX issues_by_update ON issues (project, updated_at);
    CREATE TABLE audit_events (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      ts TEXT NOT NULL,
      agent_id TEXT,
      method TEXT NOT NULL,
      path TEXT NOT NULL,
      status INTEGER,
      request_body TEXT,
      response_summary TEXT
    );
    CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
      BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;
    CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
      BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;
  `,
  // INSERT OR REPLACE on an existing id deletes the old row without firing delete triggers.
  2: `
    CREATE TRIGGER audit_events_no_replace BEFORE INSERT ON audit_events
      WHEN EXISTS (SELECT 1 FROM audit_events WHERE id = NEW.id)
      BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END;
  `,
  3: COMMENTS_MIGRATION,
};

export interface Project {
  readonly slug: string;
  readonly name: string;
  readonly description: string;
  readonly created_at: string;
  readonly issue_count: number;
}

export interface IssueInput {
  readonly title?: string;
  readonly status?: SimStatus;
  readonly labels?: readonly string[];
  readonly body?: string;
  readonly assignee?: string | null;
}

export interface AuditRow {
  readonly ts: string;
  readonly agent_id: string | null;
  readonly method: string;
  readonly path: string;
  readonly status: number | null;
  readonly request_body: string;
  readonly response_summary: string;
}

interface IssueRow {
  id: number;
  title: string;
  status: SimStatus;
  labels: string;
  body: string;
  assignee: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export type WriteOutcome =
  | { readonly kind: "ok"; readonly issue: SimIssue }
  | { readonly kind: "not_found" }
  | { readonly kind: "version_mismatch"; readonly current: number };

export type DeleteOutcome = { readonly kind: "ok" } | Exclude<WriteOutcome, { kind: "ok" }>;

function toIssue(row: IssueRow): SimIssue {
  return {
    frontmatter: {
      id: row.id,
      title: row.title,
      status: row.status,
      labels: JSON.parse(row.labels) as string[],
      created_at: row.created_at,
      updated_at: row.updated_at,
      version: row.version,
      ...(row.assignee === null ? {} : { assignee: row.assignee }),
    },
    body: row.body,
  };
}

const ISSUE_COLUMNS = "id, title, status, labels, body, assignee, created_at, updated_at, version";

export class SimStore {
  private readonly db: Database;
  private lastTimestamp = 0;
  private transactionRunner: ((run: () => unknown) => unknown) | undefined;
  private readonly clock: () => number;
  private readonly statements;
  /** The connections of the snapshots being read (`issueSnapshot`), closed with the store. */
  private readonly readers = new Set<Database>();
  private idleReader: Database | undefined;
  /** The comments of every project (comment-store.ts). */
  readonly comments: SimComments;

  /** `path` is a file, or `:memory:` for `--ephemeral`. */
  constructor(
    private readonly path: string,
    options: { clock?: () => number } = {},
  ) {
    this.clock = options.clock ?? Date.now;
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    try {
      this.db = openStore(path, {
        schema: {
          migrations: MIGRATIONS,
          latest: SCHEMA_VERSION,
          tooNew: (current) =>
            `the simulator store ${path} has schema revision ${current}, newer than this svc knows (${SCHEMA_VERSION}); ` +
            "upgrade svc, or start with another --db",
        },
        cannotOpen: (error) =>
          new SvcError("SVC_STORE", `cannot open the simulator store ${path}: ${error.message}`, {
            cause: error,
          }),
      });
    } catch (error) {
      if (error instanceof SvcError) throw error;
      throw new SvcError(
        "SVC_STORE",
        `cannot use ${path} as the simulator store: ${(error as Error).message}; point --db at another file`,
        { cause: error },
      );
    }
    const db = this.db;
    this.statements = {
      projects: db.prepare(
        `SELECT p.slug, p.name, p.description, p.created_at,
                (SELECT count(*) FROM issues i WHERE i.project = p.slug) AS issue_count
         FROM projects p ORDER BY p.slug`,
      ),
      project: db.prepare(
        `SELECT p.slug, p.name, p.description, p.created_at,
                (SELECT count(*) FROM issues i WHERE i.project = p.slug) AS issue_count
         FROM projects p WHERE p.slug = ?`,
      ),
      projectExists: db.prepare("SELECT 1 FROM projects WHERE slug = ?").pluck(),
      issueCount: db.prepare("SELECT count(*) FROM issues WHERE project = ?").pluck(),
      insertProject: db.prepare(
        "INSERT INTO projects (slug, name, description, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
      ),
      nextId: db
        .prepare(
          "UPDATE projects SET last_issue_id = last_issue_id + 1 WHERE slug = ? RETURNING last_issue_id",
        )
        .pluck(),
      issues: db.prepare(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE project = ? ORDER BY id`),
      // Without the hint SQLite walks the primary key (it gives ORDER BY id for free) through every issue of
      // the project: a delta listing of 2 issues cost ~25 ms more at 100,000 issues than at 10,000. The
      // index finds the few changed ones; sorting those is nothing.
      issuesSince: db.prepare(
        `SELECT ${ISSUE_COLUMNS} FROM issues INDEXED BY issues_by_update WHERE project = ? AND updated_at >= ? ORDER BY id`,
      ),
      issue: db.prepare(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE project = ? AND id = ?`),
      insertIssue: db.prepare(
        `INSERT INTO issues (project, id, title, status, labels, body, assignee, created_at, updated_at, version)
         VALUES (@project, @id, @title, @status, @labels, @body, @assignee, @created_at, @updated_at, @version)`,
      ),
      updateIssue: db.prepare(
        `UPDATE issues SET title = @title, status = @status, labels = @labels, body = @body, assignee = @assignee,
                updated_at = @updated_at, version = version + 1
         WHERE project = @project AND id = @id`,
      ),
      deleteIssue: db.prepare("DELETE FROM issues WHERE project = ? AND id = ?"),
      audit: db.prepare(
        `INSERT INTO audit_events (ts, agent_id, method, path, status, request_body, response_summary)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      auditRows: db.prepare(
        "SELECT id, ts, agent_id, method, path, status, request_body, response_summary FROM audit_events ORDER BY id",
      ),
    };
    this.comments = new SimComments(db, {
      timestamp: () => this.timestamp(),
      timestampAfter: (previous) => this.timestampAfter(previous),
      atomically: (work) => this.atomically(work),
      snapshot: (sql, parameters, map) => this.snapshot(sql, parameters, map),
    });
  }

  /** RFC 3339 UTC with milliseconds, never earlier than the last one this store handed out. */
  timestamp(): string {
    this.lastTimestamp = Math.max(this.clock(), this.lastTimestamp);
    return new Date(this.lastTimestamp).toISOString();
  }

  /** A timestamp for a write that replaces `previous`: strictly later, so every update moves `updated_at`. */
  private timestampAfter(previous: string): string {
    const now = this.timestamp();
    const previousMillis = Date.parse(previous);
    if (Date.parse(now) > previousMillis) return now;
    this.lastTimestamp = previousMillis + 1;
    return new Date(this.lastTimestamp).toISOString();
  }

  listProjects(): Project[] {
    return this.statements.projects.all() as Project[];
  }

  getProject(slug: string): Project | undefined {
    return this.statements.project.get(slug) as Project | undefined;
  }

  /** How many issues project `slug` holds now (0 for a project that does not exist). */
  issueCount(slug: string): number {
    return this.statements.issueCount.get(slug) as number;
  }

  hasProject(slug: string): boolean {
    return this.statements.projectExists.get(slug) !== undefined;
  }

  /** Creates the project if it does not exist yet; returns whether it did. */
  ensureProject(slug: string, name: string, description: string, createdAt: string): boolean {
    return this.statements.insertProject.run(slug, name, description, createdAt).changes === 1;
  }

  /** `since` must already be normalized to the store's timestamp format (UTC, milliseconds). */
  listIssues(slug: string, since?: string): SimIssue[] {
    const rows = (
      since === undefined ? this.statements.issues.all(slug) : this.statements.issuesSince.all(slug, since)
    ) as IssueRow[];
    return rows.map(toIssue);
  }

  /**
   * The issues `listIssues` returns, read as they are iterated: a listing of 1,000,000 issues is streamed
   * (app.ts) and never held whole; see `snapshot`.
   */
  issueSnapshot(slug: string, since?: string): Generator<SimIssue> {
    return since === undefined
      ? this.snapshot(`SELECT ${ISSUE_COLUMNS} FROM issues WHERE project = ? ORDER BY id`, [slug], toIssue)
      : this.snapshot(
          `SELECT ${ISSUE_COLUMNS} FROM issues INDEXED BY issues_by_update WHERE project = ? AND updated_at >= ? ORDER BY id`,
          [slug, since],
          toIssue,
        );
  }

  /**
   * The rows of the query `sql`, read as they are iterated and mapped by `map`. They are one snapshot,
   * whatever is written meanwhile: a file store reads them with one statement on a read-only connection of
   * its own (SQLite's write-ahead log lets the writers go on); an in-memory store, which no other connection
   * can see, reads them all at once. Every listing of the simulator (issues, comments) is read here.
   */
  *snapshot<Row, T>(sql: string, parameters: readonly unknown[], map: (row: Row) => T): Generator<T> {
    if (this.path === ":memory:") {
      const rows = this.db.prepare(sql).all(...parameters) as Row[];
      yield* rows.map(map);
      return;
    }
    // One idle connection is kept for the next listing (opening one costs a few ms on every fetch's delta).
    const reader = this.idleReader ?? new Database(this.path, { readonly: true, fileMustExist: true });
    this.idleReader = undefined;
    this.readers.add(reader);
    let done = false;
    try {
      for (const row of reader.prepare(sql).iterate(...parameters)) yield map(row as Row);
      done = true;
    } finally {
      this.readers.delete(reader);
      if (done && this.idleReader === undefined && this.db.open) this.idleReader = reader;
      else reader.close();
    }
  }

  getIssue(slug: string, id: number): SimIssue | undefined {
    const row = this.statements.issue.get(slug, id) as IssueRow | undefined;
    return row && toIssue(row);
  }

  /** Creates an issue, and its project when this is the project's first. */
  createIssue(
    slug: string,
    input: IssueInput & { title: string },
    at?: { created_at: string; updated_at: string; version: number },
  ): SimIssue {
    return this.db.transaction(() => {
      const now = at?.created_at ?? this.timestamp();
      this.ensureProject(slug, slug, "", now);
      const id = this.statements.nextId.get(slug) as number;
      this.statements.insertIssue.run({
        project: slug,
        id,
        title: input.title,
        status: input.status ?? "open",
        labels: JSON.stringify(input.labels ?? []),
        body: input.body ?? "",
        assignee: input.assignee ?? null,
        created_at: now,
        updated_at: at?.updated_at ?? now,
        version: at?.version ?? 1,
      });
      return toIssue(this.statements.issue.get(slug, id) as IssueRow);
    })();
  }

  /** Applies `changes` when `expectedVersion` is undefined (wildcard) or equals the stored version. */
  patchIssue(
    slug: string,
    id: number,
    changes: IssueInput,
    expectedVersion: number | undefined,
  ): WriteOutcome {
    return this.atomically((): WriteOutcome => {
      const row = this.statements.issue.get(slug, id) as IssueRow | undefined;
      if (!row) return { kind: "not_found" };
      if (expectedVersion !== undefined && expectedVersion !== row.version) {
        return { kind: "version_mismatch", current: row.version };
      }
      this.statements.updateIssue.run({
        project: slug,
        id,
        title: changes.title ?? row.title,
        status: changes.status ?? row.status,
        labels: changes.labels ? JSON.stringify(changes.labels) : row.labels,
        body: changes.body ?? row.body,
        assignee: changes.assignee === undefined ? row.assignee : changes.assignee,
        updated_at: this.timestampAfter(row.updated_at),
      });
      return { kind: "ok", issue: toIssue(this.statements.issue.get(slug, id) as IssueRow) };
    });
  }

  /** A real delete; the id is never handed out again (`last_issue_id` only grows). */
  deleteIssue(slug: string, id: number, expectedVersion: number | undefined): DeleteOutcome {
    return this.atomically((): DeleteOutcome => {
      const row = this.statements.issue.get(slug, id) as IssueRow | undefined;
      if (!row) return { kind: "not_found" };
      if (expectedVersion !== undefined && expectedVersion !== row.version) {
        return { kind: "version_mismatch", current: row.version };
      }
      this.statements.deleteIssue.run(slug, id);
      return { kind: "ok" };
    });
  }

  /**
   * A new comment on issue `id` (comment-store.ts), or undefined when the issue does not exist: checked in
   * the same transaction as the write, so a comment never outlives a concurrent delete of its issue.
   */
  createComment(
    slug: string,
    id: number,
    input: { author: string; body: string },
    at?: { created_at: string; updated_at: string; version: number },
  ): SimComment | undefined {
    return this.atomically(() =>
      this.statements.issue.get(slug, id) === undefined
        ? undefined
        : this.comments.create(slug, id, input, at),
    );
  }

  appendAudit(row: AuditRow): void {
    this.appendAuditBatch([row]);
  }

  /** Appends `rows` in one transaction: all or none. */
  appendAuditBatch(rows: readonly AuditRow[]): void {
    const insert = (row: AuditRow) =>
      this.statements.audit.run(
        row.ts,
        row.agent_id,
        row.method,
        row.path,
        row.status,
        row.request_body,
        row.response_summary,
      );
    if (rows.length === 1 && rows[0]) {
      insert(rows[0]);
      return;
    }
    this.atomically(() => {
      for (const row of rows) insert(row);
    });
  }

  /**
   * Runs `work` in one transaction. The wrapper is made once: `transaction()` (core/sqlite.ts) builds new
   * functions on every call, which showed up in profiles of the request path.
   */
  private atomically<T>(work: () => T): T {
    this.transactionRunner ??= this.db.transaction((run: () => unknown) => run());
    return this.transactionRunner(work) as T;
  }

  /** The audit log in insertion order, for tests and inspection; read-only. */
  auditRows(): (AuditRow & { readonly id: number })[] {
    return this.statements.auditRows.all() as (AuditRow & { readonly id: number })[];
  }

  /** Runs `work` in one transaction (the seed loader). */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  /** Checkpoints the WAL into the main file and closes. */
  close(): void {
    this.idleReader?.close();
    this.idleReader = undefined;
    for (const reader of this.readers) {
      try {
        reader.close();
      } catch {
        // still iterating: it closes when its listing ends
      }
    }
    if (!this.db.open) return;
    try {
      this.db.pragma("wal_checkpoint(TRUNCATE)");
    } finally {
      this.db.close();
    }
  }
}
