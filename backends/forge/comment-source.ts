/**
 * The forge's comments as the sync and the push use every backend's (backends/backend.ts `CommentSource`):
 * an adapter of the forge's comment client (backends/forge/comments.ts), which it keeps as it is.
 *
 * - `isRecord` (the cache's records and this sync's issues listing, which skips pull requests) tells the
 *   client which comments are on issues; with none given, every comment's parent counts as an issue.
 * - A listing may name a comment twice (the full listing and the delta it primes): the last one is kept.
 * - A skipped comment created after the issues listing began (less the overlap, for clock skew), on no pull
 *   request that listing saw, may be on an issue created between the two listings: the cursor is held back
 *   before it and this listing's validators are not kept, so the next fetch lists it again, once the issues
 *   listing knows its issue. Other skipped comments are on pull requests and stay skipped (a new comment
 *   moves its pull request's `updated_at`, so the issues listing that precedes it has seen the pull request).
 * - No comment version: `update` and `remove` compare `updated_at` before the write (the client does it).
 */
import type {
  BaseToken,
  CommentDeleteOutcome,
  CommentIdentity,
  CommentListing,
  CommentSource,
  CommentWriteOutcome,
  IsRecord,
  ServerComment,
} from "../backend.js";
import {
  type CommentListing as ForgeCommentListing,
  type ForgeComments,
  MAX_COMMENT_CHARACTERS,
} from "./comments.js";

/** What the backend's issue listings in this process saw. */
export interface IssuesListed {
  /** When the last one began (ms), or undefined. */
  readonly listedAt: () => number | undefined;
  /** Whether they skipped `key` as a pull request. */
  readonly isPullRequest: (key: string) => boolean;
  /** The backend's `overlapMs`. */
  readonly overlapMs: number;
}

export class ForgeCommentSource implements CommentSource {
  readonly versioned = false;
  /** GitHub counts code points; a UTF-16 length at this limit may still be over it, which the client says. */
  readonly bodyMaxLength = MAX_COMMENT_CHARACTERS;

  constructor(
    private readonly client: ForgeComments,
    private readonly issues: IssuesListed,
  ) {}

  async listAll(isRecord?: IsRecord): Promise<CommentListing> {
    return this.adapt(await this.client.listAll(isRecord ?? (() => true)));
  }

  async listChangedSince(since: string, isRecord?: IsRecord): Promise<CommentListing> {
    return this.adapt(await this.client.listChangedSince(since, isRecord ?? (() => true)));
  }

  private adapt(listing: ForgeCommentListing): CommentListing {
    const byId = new Map<string, ServerComment>();
    for (const comment of listing.comments) {
      byId.delete(comment.id);
      byId.set(comment.id, comment);
    }
    const from = new Date((this.issues.listedAt() ?? Date.now()) - this.issues.overlapMs).toISOString();
    let held: string | undefined;
    for (const comment of listing.skippedComments) {
      if (this.issues.isPullRequest(comment.parentKey) || comment.createdAt < from) continue;
      if (held === undefined || comment.updatedAt < held) held = comment.updatedAt;
    }
    const ceiling =
      held === undefined
        ? listing.cursorCeiling
        : listing.cursorCeiling !== undefined && listing.cursorCeiling < held
          ? listing.cursorCeiling
          : held;
    return {
      comments: [...byId.values()],
      complete: listing.complete,
      unchanged: listing.unchanged,
      ...(held === undefined
        ? {
            validators: listing.validators,
            ...(listing.replacesValidators === undefined
              ? {}
              : { replacesValidators: listing.replacesValidators }),
          }
        : {}),
      ...(ceiling === undefined ? {} : { cursorCeiling: ceiling }),
    };
  }

  /** The forge names the author from the token: `author` is not sent. */
  create(parentKey: string, body: string): Promise<ServerComment> {
    return this.client.create(parentKey, body);
  }

  update(id: string, body: string, base: BaseToken): Promise<CommentWriteOutcome> {
    return this.client.update(id, body, base);
  }

  remove(id: string, base: BaseToken): Promise<CommentDeleteOutcome> {
    return this.client.remove(id, base);
  }

  /** `GET /user`'s login, which comments name as their author. */
  async whoAmI(): Promise<CommentIdentity> {
    const login = await this.client.whoAmI();
    return { id: login, author: login };
  }
}
