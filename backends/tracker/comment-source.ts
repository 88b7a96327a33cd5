/**
 * The tracker's comments as the `CommentSource` the sync and the push use (backends/backend.ts): an adapter
 * over the vendor client (comments.ts), which keeps its own signatures.
 *
 * - Listings: the client's, without `threads`. A listing of every issue is complete (each issue's whole
 *   thread is read), so a comment the cache holds that it lacks is deleted on the server; a delta carries no
 *   count, so the sync infers no deletion from it (a deletion does not move the issue's `updated` either).
 * - `update` and `remove` are asked with the comment's record (`parentKey`, which the push finds from the
 *   comment file's folder): Jira's comment paths hold the issue key.
 * - The body limit counts the ADF's text, not the Markdown's characters: `bodyProblem` is the client's
 *   `commentBodyProblem` (32,767 characters of text), checked before any write.
 * - Who "you" are: the account of `GET /myself` (its accountId; the author as comment files name it,
 *   `Display Name (accountId)`).
 */
import { UserFacingError } from "../../core/errors.js";
import type {
  BaseToken,
  CommentIdentity,
  CommentListing,
  CommentSource,
  CommentWriteOutcome,
} from "../backend.js";
import { commentBodyProblem, type TrackerCommentListing, type TrackerComments } from "./comments.js";

export class TrackerCommentSource implements CommentSource {
  readonly versioned = false;

  constructor(private readonly client: TrackerComments) {}

  async listAll(): Promise<CommentListing> {
    return listingOf(await this.client.listAll());
  }

  async listChangedSince(since: string): Promise<CommentListing> {
    return listingOf(await this.client.listChangedSince(since));
  }

  bodyProblem(body: string): string | undefined {
    return commentBodyProblem(body);
  }

  /** Posts as the configured account: the tracker ignores `author`. */
  create(parentKey: string, body: string): ReturnType<CommentSource["create"]> {
    return this.client.create(parentKey, body);
  }

  async update(id: string, body: string, base: BaseToken, parentKey?: string): Promise<CommentWriteOutcome> {
    return await this.client.update(issueOf(id, parentKey), id, body, base);
  }

  async remove(id: string, base: BaseToken, parentKey?: string): ReturnType<CommentSource["remove"]> {
    return await this.client.remove(issueOf(id, parentKey), id, base);
  }

  async whoAmI(): Promise<CommentIdentity> {
    const me = await this.client.whoAmI();
    const name = me.displayName === "" ? "Unknown user" : me.displayName;
    return { id: me.accountId, author: `${name} (${me.accountId})` };
  }
}

function listingOf(listing: TrackerCommentListing): CommentListing {
  return { comments: listing.comments, complete: listing.complete };
}

/** The issue of comment `id`: Jira has no comment path without it. */
function issueOf(id: string, parentKey: string | undefined): string {
  if (parentKey === undefined || parentKey === "")
    throw new UserFacingError(
      "SVC_RECORD_INVALID",
      `comment ${id}: the issue it is on is not known (its folder under comments/ names no issue the cache holds); run git pull`,
    );
  return parentKey;
}
