/**
 * The wiki's footer comments as the generic `CommentSource` (backends/backend.ts) the sync and the push use:
 * an adapter over the vendor client (comments.ts), which keeps its own signatures.
 *
 * - The listings: the client's site-wide listing kept to the space's pages, whose ids the sync gives
 *   (`isRecord.all()`: the cache's pages and those its page listing just named). A delta (`listChangedSince`)
 *   never shows a deleted comment (the vendor deletes comments for good), so it is not complete: deletions
 *   show at the next full listing.
 * - One client per backend (so per sync or push): it keeps the authors' display names and the caller's
 *   account; the adapter keeps each comment's origin (when and by whom version 1 was written, which never
 *   changes) from what it has read, so the client asks `/versions` for an edited comment at most once.
 * - `update` is conditional on the base version (the PUT names base + 1; 409 is a conflict); someone else's
 *   comment answers 404 (gone), but the push refuses those before any write. `remove` reads the comment first
 *   and deletes it only at the base version (comments.ts).
 * - Who "you" are: the account the credentials belong to (`GET /wiki/rest/api/user/current`), compared by
 *   account id; the file names it `Display Name (accountId)`.
 */
import type {
  BaseToken,
  CommentDeleteOutcome,
  CommentIdentity,
  CommentListing,
  CommentSource,
  CommentWriteOutcome,
  IsRecord,
} from "../backend.js";
import type { ServerComment } from "../comment.js";
import type { CommentOrigin, WikiComments } from "./comments.js";

export class WikiCommentSource implements CommentSource {
  readonly versioned = true;
  /** Comment id → its origin, from every comment this source has returned. */
  private readonly origins = new Map<string, CommentOrigin>();
  private readonly known = (id: string): CommentOrigin | undefined => this.origins.get(id);

  constructor(private readonly client: WikiComments) {}

  async listAll(isRecord?: IsRecord): Promise<CommentListing> {
    const pages = isRecord?.all() ?? new Set<string>();
    return { comments: this.keep(await this.client.listAll(pages, this.known)), complete: true };
  }

  async listChangedSince(since: string, isRecord?: IsRecord): Promise<CommentListing> {
    const pages = isRecord?.all() ?? new Set<string>();
    const comments = this.keep(await this.client.listChangedSince(since, pages, this.known));
    return { comments, complete: false };
  }

  async create(parentKey: string, body: string, _author: string): Promise<ServerComment> {
    return this.keepOne(await this.client.create(parentKey, body));
  }

  async update(id: string, body: string, base: BaseToken): Promise<CommentWriteOutcome> {
    const outcome = await this.client.update(id, body, base.version ?? 0, this.known);
    if (outcome.kind === "ok") this.keepOne(outcome.comment);
    return outcome;
  }

  remove(id: string, base: BaseToken): Promise<CommentDeleteOutcome> {
    return this.client.remove(id, base.version ?? 0);
  }

  /** The credentials' account; the git config's name plays no part on the wiki. */
  async whoAmI(_configured: string | undefined): Promise<CommentIdentity> {
    const me = await this.client.whoAmI();
    return { id: me.accountId, author: `${me.displayName || "Unknown user"} (${me.accountId})` };
  }

  private keep(comments: ServerComment[]): ServerComment[] {
    for (const comment of comments) this.keepOne(comment);
    return comments;
  }

  private keepOne(comment: ServerComment): ServerComment {
    this.origins.set(comment.id, { createdAt: comment.createdAt, authorId: comment.authorId });
    return comment;
  }
}
