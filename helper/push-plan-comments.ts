/**
 * The push planner for comment files (issue 34, DESIGN.md §2 "Comments"): `comments/<stem>/<name>.md`,
 * where `<stem>` names the record whose file is `<folder>/<stem>.md`. Pure, like the record planner it
 * extends (push-plan.ts), and table-tested the same way.
 *
 * Rules:
 * - A new file without `id` is a comment on that record (a create, through the create journal like a
 *   record's: after `git pull` it is `<id>.md`). The record must be on the server: a comment on a record
 *   this same push creates is refused before any write ("push the record first", with the commands), and so
 *   is one on a folder no record has.
 * - An edited body of the user's own comment is an update conditional on the version (or `updated_at`) the
 *   user's file has; `git rm` of it is a delete (the bulk-delete guard counts it). Edits of the
 *   server-controlled fields are ignored and reported, as for records.
 * - Someone else's comment edited or deleted is refused before any write, naming the file and the author,
 *   with the command that restores it (`git checkout <base> -- <file>`).
 * - A new file that carries an `id` is refused: comments cannot be copied or moved.
 * - A new comment file may hold only its text, without a frontmatter block.
 */
import { type CommentIdentity, commentKey, isOwnComment, parseCommentPath } from "../backends/comment.js";
import type { RecordContent } from "../backends/record.js";
import { editedServerFields, isNoChange, recordChanges } from "../backends/record-diff.js";
import { type DiffEntry, isUnsafePath, type Plan, type PlanInput, Planner } from "./push-plan.js";

export interface CommentPlanInput extends PlanInput {
  /** The records' folder (`issues`): a comment folder `<stem>` belongs to `<folder>/<stem>.md`. */
  readonly recordFolder: string;
  /** The key of the record whose file is `path` on the server, or undefined when there is none. */
  readonly recordAt: (path: string) => string | undefined;
  /** Who pushes, as comments name authors. */
  readonly me: CommentIdentity;
  /** The commit to restore someone else's comment from: the push's base. */
  readonly restoreFrom: string;
  /**
   * Every entry of the push, comment files or not: a record file it adds without an id is a record this
   * push creates.
   */
  readonly allEntries: readonly DiffEntry[];
}

export function planComments(input: CommentPlanInput): Plan {
  return new CommentPlanner(input).planComments();
}

/** The comment id a file names (its `id`), or undefined for a new comment. */
function idOf(content: RecordContent | undefined): string | undefined {
  const id = content?.fields.id;
  return id === undefined || id === null ? undefined : String(id);
}

class CommentPlanner extends Planner {
  constructor(private readonly comments: CommentPlanInput) {
    super(comments);
  }

  planComments(): Plan {
    for (const entry of this.comments.entries) {
      if (!this.isCommentEntry(entry)) continue;
      if (entry.status === "D") this.planCommentDelete(entry);
      else if (entry.status === "A") this.planNew(entry);
      else this.planEdit(entry);
    }
    return { writes: this.writes, problems: this.problems, ignoredEdits: this.ignoredEdits };
  }

  /**
   * A new comment may be just its text (`echo LGTM > comments/0042/new.md`): a file that does not start
   * with a frontmatter block is all body.
   */
  protected override parseText(path: string, text: string, rendered = false): RecordContent {
    if (!/^(\uFEFF)?---[ \t]*\r?\n/.test(text)) return { fields: {}, body: text };
    return super.parseText(path, text, rendered);
  }

  /** Whether `entry` is a comment file; refuses (and says why) anything else under `comments/`. */
  private isCommentEntry(entry: DiffEntry): boolean {
    const where = "a comment is comments/<record file name without .md>/<name>.md";
    if (isUnsafePath(entry.path)) {
      this.refuse(entry.path, `the path is not a file inside the repository; ${where}`);
      return false;
    }
    if (!parseCommentPath(entry.path)) {
      if (entry.status !== "D") this.refuse(entry.path, `svc pushes nothing else there: ${where}`, "untrack");
      return false;
    }
    if (
      entry.status === "T" ||
      (entry.status !== "D" && entry.newMode !== "100644" && entry.newMode !== "100755")
    ) {
      this.refuse(entry.path, "a comment must be a regular file (not a link or a submodule)", "untrack");
      return false;
    }
    return true;
  }

  /** Someone else's comment: refused, with the command that brings the file back. */
  private refuseOthers(path: string, author: string, what: "edited" | "deleted"): void {
    this.refuse(
      path,
      `this is ${author}'s comment, ${what} here; svc never rewrites or deletes anyone else's comment (you are ${this.comments.me.author}). Restore the file`,
      { kind: "restore", file: path, source: this.comments.restoreFrom },
    );
  }

  private planCommentDelete(entry: DiffEntry): void {
    const base = this.parse(entry.path, entry.oldOid);
    if (!base) return;
    const id = idOf(base);
    if (id === undefined) {
      // A comment an earlier push created from this file, not pulled yet; else a file never pushed.
      const match = this.comments.journal(entry.path, entry.oldOid);
      const token = match?.created?.token ?? (match && this.comments.baseToken(match.key));
      if (match && token) this.add({ kind: "delete", key: match.key, path: entry.path, base: token });
      return;
    }
    const author = String(base.fields.author ?? "");
    if (!isOwnComment(author, this.comments.me)) {
      this.refuseOthers(entry.path, author, "deleted");
      return;
    }
    this.add({ kind: "delete", key: commentKey(id), path: entry.path, base: this.tokenOf(base) });
  }

  private planNew(entry: DiffEntry): void {
    const mine = this.parse(entry.path, entry.newOid);
    if (!mine) return;
    if (idOf(mine) !== undefined) {
      this.refuse(
        entry.path,
        `a new comment file carries id ${idOf(mine)}; comments cannot be copied or moved. Remove the \`id:\` line (and the other fields) to post it as a new comment`,
        "edit",
      );
      return;
    }
    const match = this.comments.journal(entry.path, undefined);
    if (match?.created) {
      this.planBodyUpdate(match.key, entry.path, match.created.original, mine, match.created.token);
      return;
    }
    const parent = this.parentOf(entry.path);
    if (parent === undefined) return;
    const changes = { fields: { parent }, body: mine.body };
    this.add({ kind: "create", path: entry.path, oid: entry.newOid, changes }, changes);
  }

  /** The key of the record a new comment at `path` goes on; refuses (and says why) when there is none. */
  private parentOf(path: string): string | undefined {
    const { stem } = parseCommentPath(path) ?? { stem: "" };
    const recordPath = `${this.comments.recordFolder}/${stem}.md`;
    const key = this.comments.recordAt(recordPath);
    if (key !== undefined) return key;
    const created = this.comments.allEntries.some(
      (entry) => entry.status === "A" && entry.path === recordPath,
    );
    this.refuse(
      path,
      created
        ? `${recordPath} is a record this push creates; svc posts a comment only on a record the server has. Push the record first: take the comment out of this commit (the command below; the file stays on disk), push; after git pull the record is ${this.comments.recordFolder}/<id>.md, then move the comment to comments/<id>/ and git add, commit and push it`
        : `there is no record ${recordPath} on the server for this comment; a comment goes in the folder named after its record's file (comments/0042/ for ${this.comments.recordFolder}/0042.md)`,
      "untrack",
    );
    return undefined;
  }

  private planEdit(entry: DiffEntry): void {
    const base = this.parse(entry.path, entry.oldOid);
    const mine = this.parse(entry.path, entry.newOid);
    if (!base || !mine) return;
    const id = idOf(base);
    if (id === undefined) {
      // A new comment edited again before a pull: the one an earlier push created from it, or still new.
      const match = this.comments.journal(entry.path, entry.oldOid);
      const token = match?.created?.token ?? (match && this.comments.baseToken(match.key));
      if (match && token)
        this.planBodyUpdate(match.key, entry.path, match.created?.original ?? base, mine, token);
      else this.planNew({ ...entry, status: "A" });
      return;
    }
    const author = String(base.fields.author ?? "");
    if (!isOwnComment(author, this.comments.me)) {
      const changed = !isNoChange(recordChanges(this.input.schema, base, mine));
      if (changed || editedServerFields(this.input.schema, base, mine).length > 0)
        this.refuseOthers(entry.path, author, "edited");
      return;
    }
    this.planBodyUpdate(commentKey(id), entry.path, base, mine, this.tokenOf(base));
  }

  /** An update of the body of comment `key`, when it differs from `base`'s. */
  private planBodyUpdate(
    key: string,
    path: string,
    base: RecordContent,
    mine: RecordContent,
    token: { version: number | null; updatedAt: string },
  ): void {
    const edited = editedServerFields(this.input.schema, base, mine);
    if (edited.length > 0) this.ignoredEdits.push({ path, fields: edited });
    const desired = { fields: {}, body: mine.body };
    const changes = recordChanges(this.input.schema, base, desired);
    if (isNoChange(changes)) return;
    this.add({ kind: "update", key, path, base: token, changes, desired, original: base }, changes);
  }

  /** The concurrency token a comment file carries: what the user's edit is based on. */
  private tokenOf(content: RecordContent): { version: number | null; updatedAt: string } {
    const version = content.fields.version;
    const updatedAt = content.fields.updated_at;
    return {
      version: typeof version === "number" ? version : null,
      updatedAt: typeof updatedAt === "string" ? updatedAt : "",
    };
  }
}
