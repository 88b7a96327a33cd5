/**
 * The forge's comments as the sync and the push use every backend's (backends/backend.ts `CommentSource`):
 * an adapter of the forge's comment client (backends/forge/comments.ts), which it keeps as it is.
 *
 * - `isRecord` (the cache's records and this sync's issues listing, which skips pull requests) tells the
 *   client which comments are on issues; with none given, every comment's parent counts as an issue.
 * - A listing may name a comment twice (the full listing and the delta it primes): the last one is kept.
 * - A skipped comment created after the issues listing began (less the overlap, for clock skew) may be on an
 *   issue created between the two listings: the cursor is held back before it and this listing's validators
 *   are not kept, so the next fetch lists it again, once the issues listing knows its issue. Older skipped
 *   comments are on pull requests and stay skipped.
 * - No comment version: `update` and `remove` compare `updated_at` before the write (the client does it).
 */
import type {
  BaseToken,
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

export class ForgeCommentSource implements CommentSource {
  readonly versioned = false;
  /** GitHub counts code points; a UTF-16 length at this limit may still be over it, which the client says. */
  readonly bodyMaxLength = MAX_COMMENT_CHARACTERS;

  /**
   * `recordsListedAt`: when this process last began listing the issues (ms), or undefined; `overlapMs`: the
   * backend's.
   */
  constructor(
    private readonly client: ForgeComments,
    private readonly recordsListedAt: () => number | undefined,
    private readonly overlapMs: number,
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
    const from = new Date((this.recordsListedAt() ?? Date.now()) - this.overlapMs).toISOString();
    let held: string | undefined;
    for (const comment of listing.skippedComments) {
      if (comment.createdAt >= from && (held === undefined || comment.updatedAt < held))
        held = comment.updatedAt;
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

  remove(
    id: string,
    base: BaseToken,
  ): Promise<Exclude<CommentWriteOutcome, { kind: "ok" }> | { kind: "ok" }> {
    return this.client.remove(id, base);
  }

  /** `GET /user`'s login, which comments name as their author. */
  async whoAmI(): Promise<CommentIdentity> {
    const login = await this.client.whoAmI();
    return { id: login, author: login };
  }
}
