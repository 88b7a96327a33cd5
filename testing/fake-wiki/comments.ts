/**
 * The fake wiki's footer comments and the accounts that write them: each comment with its page, its storage
 * body and every version it had (oldest first), and the accounts' display names. Ids come from a sequence of
 * their own. Inline comments and replies are not modelled (Document 3 defers them).
 *
 * ASSUMPTION: the vendor's content ids (pages and comments alike) come from one sequence; here comments have
 * their own, starting at 3,200,001 by default, so that page ids stay small and exact for the page tests.
 */
import type { FakeWikiComment, FakeWikiVersion } from "./types.js";
import { ACCOUNT_DISPLAY_NAME, ACCOUNT_ID, OTHER_ACCOUNT_ID, OTHER_DISPLAY_NAME } from "./vendor-data.js";

export interface Comment {
  readonly id: string;
  readonly pageId: string;
  body: string;
  /** Oldest first; the last is the current version. */
  readonly versions: FakeWikiVersion[];
}

export const currentVersion = (comment: Comment): FakeWikiVersion =>
  comment.versions[comment.versions.length - 1] as FakeWikiVersion;

export const copyComment = (comment: Comment): FakeWikiComment => {
  const first = comment.versions[0] as FakeWikiVersion;
  return {
    id: comment.id,
    pageId: comment.pageId,
    body: comment.body,
    createdAt: first.createdAt,
    authorId: first.authorId,
    version: { ...currentVersion(comment) },
  };
};

export class CommentStore {
  readonly comments = new Map<string, Comment>();
  /** Account id → display name: the configured account and one "someone else" to begin with. */
  readonly users = new Map<string, string>([
    [ACCOUNT_ID, ACCOUNT_DISPLAY_NAME],
    [OTHER_ACCOUNT_ID, OTHER_DISPLAY_NAME],
  ]);
  private nextId: number;

  constructor(firstCommentId: number) {
    this.nextId = firstCommentId;
  }

  insert(pageId: string, body: string, authorId: string, createdAt: string): Comment {
    const comment: Comment = {
      id: String(this.nextId++),
      pageId,
      body,
      versions: [{ number: 1, createdAt, message: "", minorEdit: false, authorId }],
    };
    this.comments.set(comment.id, comment);
    return comment;
  }

  /** A new version with `body`, written by `authorId` at `createdAt`. */
  edit(comment: Comment, body: string, authorId: string, createdAt: string, message = ""): void {
    comment.body = body;
    comment.versions.push({
      number: currentVersion(comment).number + 1,
      createdAt,
      message,
      minorEdit: false,
      authorId,
    });
  }

  /** The comments of `pageId`, by id. */
  ofPage(pageId: string): Comment[] {
    return [...this.comments.values()].filter((comment) => comment.pageId === pageId);
  }

  /** For the test helpers: an unknown id is the test's bug. */
  orThrow(id: string): Comment {
    const comment = this.comments.get(id);
    if (!comment) throw new Error(`the fake wiki has no comment ${id}`);
    return comment;
  }
}
