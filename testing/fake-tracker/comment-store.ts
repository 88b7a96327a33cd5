/**
 * The fake tracker's comments: one site-wide id sequence (ids increase with time, as Jira's do), each
 * issue's thread oldest first, and what a comment does to its issue. Adding or editing a comment moves the
 * issue's `updated` to the comment's time (Jira does: the JQL delta finds the issue). ASSUMPTION: deleting
 * one does not (Jira's comment manager tweaks the issue's date on create and update only), so no delta shows
 * a deletion: only a listing of the issue's whole thread does.
 */
import type { Comment, Issue } from "./model.js";
import type { AdfJson, FakeTrackerComment } from "./types.js";

/** What the comments need of the store they belong to (store.ts `Tracker`). */
export interface CommentHost {
  now(): number;
  touch(issue: Issue, at?: number): void;
  version: number;
}

export class CommentStore {
  private readonly byId = new Map<string, Comment>();
  private nextId = 10000;

  constructor(private readonly tracker: CommentHost) {}

  /** A new comment by `author` (an account id) at `at` (default now, never before the issue's `updated`). */
  add(issue: Issue, author: string, body: AdfJson, at?: number): Comment {
    const when = at ?? Math.max(this.tracker.now(), issue.updated);
    const comment: Comment = {
      id: String(this.nextId++),
      issue,
      author,
      updateAuthor: author,
      body,
      created: when,
      updated: when,
    };
    issue.comments.push(comment);
    this.byId.set(comment.id, comment);
    this.tracker.touch(issue, Math.max(when, issue.updated));
    return comment;
  }

  /** `editor` replaces the body: `updated` moves to `at`, default now (strictly later than before). */
  edit(comment: Comment, editor: string, body: AdfJson, at?: number): Comment {
    comment.body = body;
    comment.updateAuthor = editor;
    comment.updated = at ?? Math.max(this.tracker.now(), comment.updated + 1);
    this.tracker.touch(comment.issue, Math.max(comment.updated, comment.issue.updated));
    return comment;
  }

  delete(comment: Comment): void {
    const thread = comment.issue.comments;
    thread.splice(thread.indexOf(comment), 1);
    this.byId.delete(comment.id);
    this.tracker.version++;
  }

  /** Forgets the comments of a deleted issue. */
  forget(issue: Issue): void {
    for (const comment of issue.comments) this.byId.delete(comment.id);
  }

  /** Comment `id` on `issue`; one on another issue is not found (Jira answers 404 for it). */
  on(issue: Issue, id: string): Comment | undefined {
    const comment = this.byId.get(id);
    return comment?.issue === issue ? comment : undefined;
  }

  byIdOrThrow(id: string): Comment {
    const comment = this.byId.get(id);
    if (!comment) throw new Error(`fake tracker: no comment ${id}`);
    return comment;
  }
}

/**
 * The characters of text an ADF document holds (Jira's 32,767 limit counts these). Written apart from the
 * backend's count (backends/tracker/schema.ts `textLength`) on purpose, as time.ts is: the fake checks it.
 */
export function adfTextLength(node: unknown): number {
  if (node === null || typeof node !== "object") return 0;
  const { text, content } = node as { text?: unknown; content?: unknown };
  let total = typeof text === "string" ? text.length : 0;
  if (Array.isArray(content)) for (const child of content) total += adfTextLength(child);
  return total;
}

/** A one-paragraph ADF document holding `text` (the helpers' plain-text bodies). */
export function plainDocument(text: string): AdfJson {
  return {
    type: "doc",
    version: 1,
    content: text === "" ? [] : [{ type: "paragraph", content: [{ type: "text", text }] }],
  };
}

export function copyComment(comment: Comment): FakeTrackerComment {
  return {
    id: comment.id,
    issueKey: comment.issue.key,
    author: comment.author,
    updateAuthor: comment.updateAuthor,
    body: structuredClone(comment.body),
    created: comment.created,
    updated: comment.updated,
  };
}
