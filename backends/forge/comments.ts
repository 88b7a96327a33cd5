/**
 * The forge's issue comments (issue 34; GitHub's "REST API endpoints for issue comments"), through the forge
 * backend's wire (its RestClient, rate limits, validators and result-page walk, backends/forge/pages.ts):
 *
 * - Listing: the repository-wide `GET /repos/{o}/{r}/issues/comments?sort=updated&direction=asc&per_page=100`,
 *   `since` for the delta, never one request per issue. Its result pages are made conditional exactly as the
 *   issues listing's: a no-op delta is all `304` and spends no quota; a full listing primes the next delta.
 * - Pull requests: GitHub lists their comments in the same listing, and a comment says only the number of
 *   its issue (`issue_url` ends `/issues/<n>`, for an issue and a pull request alike). So a comment is kept
 *   when the caller's `isIssue` says its number is an issue the issues listing knows (a record of the cache
 *   or of this sync's issue listing, which skips pull requests); every other is skipped and counted.
 * - Writes: `POST …/issues/{n}/comments`; `PATCH` and `DELETE …/issues/comments/{id}` with no `If-Match`
 *   on the forge: compare-before-write (backends/rest.ts `readForWrite`): the comment is read immediately
 *   before, and its `updated_at` compared with the base; changed → conflict (`fetch first`), 404 → gone.
 * - A body of more than 65,536 characters is refused before any request, naming the limit.
 * - Who "you" are: `GET /user`'s `login`, which a comment's `user.login` (`authorId`) is compared with.
 */
import { isObject, RFC3339 } from "../../core/checks.js";
import { excerpt, type SvcError, UserFacingError } from "../../core/errors.js";
import type { BaseToken, Validator } from "../backend.js";
import type { ServerComment } from "../comment.js";
import { type RestResponse, readForWrite, UnexpectedShapeError } from "../rest.js";
import { type ForgePages, type ForgeWire, type Pages, queryString, type UpdatedListing } from "./pages.js";
import type {
  CreateCommentBody,
  ListCommentsQuery,
  UpdateCommentBody,
  WireAuthenticatedUser,
  WireComment,
} from "./wire.js";

/** GitHub's limit on a comment's body ("body is too long (maximum is 65536 characters)"). */
export const MAX_COMMENT_CHARACTERS = 65_536;
const PER_PAGE = 100;
/** The login GitHub shows for a deleted account (the description lets `user` be null). */
const GHOST = "ghost";

/** Whether `key` is an issue the issues listing knows (not a pull request, not unknown). */
export type IsIssue = (key: string) => boolean;

/** A comments listing, as the sync applies it (backends/backend.ts `Listing`, with comments for records). */
export interface CommentListing {
  readonly comments: readonly ServerComment[];
  /** Ids of comments on result pages answered `304`: present, as the cache has them. */
  readonly unchanged: readonly string[];
  readonly validators: readonly Validator[];
  /** False when deletions must not be inferred from it (a delta; a page may have been skipped). */
  readonly complete: boolean;
  readonly replacesValidators?: string;
  readonly cursorCeiling?: string;
  /** Comments left out because `isIssue` did not know their issue (pull requests' among them). */
  readonly skipped: number;
  /** Those comments (the adapter holds the sync cursor back for one on an issue newer than the listing). */
  readonly skippedComments: readonly ServerComment[];
}

import type { CommentDeleteOutcome, CommentWriteOutcome } from "../backend.js";

export type { CommentDeleteOutcome, CommentWriteOutcome };

export interface ForgeCommentsOptions {
  readonly wire: ForgeWire;
  readonly pages: ForgePages;
  /** `https://api.github.com/repos/acme/widgets`. */
  readonly repoUrl: string;
  /** `acme/widgets`, for messages. */
  readonly project: string;
  /** The backend's `overlapMs`: the sync's cursor less it is the next delta's `since`. */
  readonly overlapMs: number;
}

/** The reason `value` is not GitHub's `issue-comment`, or the comment (`isIssue` not yet asked). */
export function toServerComment(value: unknown): ServerComment | string {
  if (!isObject(value)) return "a comment must be an object";
  const raw = value as Partial<WireComment>;
  const id = raw.id;
  if (typeof id !== "number" || !Number.isSafeInteger(id) || id < 1)
    return `bad comment id ${excerpt(String(id), 30)}`;
  const at = `comment ${id}`;
  const parent = typeof raw.issue_url === "string" ? /\/issues\/(\d+)$/.exec(raw.issue_url)?.[1] : undefined;
  if (parent === undefined) return `${at}: issue_url names no issue`;
  // Optional in the description: absent is an empty body.
  if (raw.body !== undefined && typeof raw.body !== "string") return `${at}: body is not a string`;
  const user: unknown = raw.user;
  const login = user === null || user === undefined ? GHOST : isObject(user) ? user.login : undefined;
  if (typeof login !== "string" || login === "") return `${at}: user has no login`;
  for (const member of ["created_at", "updated_at"] as const) {
    const time = raw[member];
    if (typeof time !== "string" || !RFC3339.test(time)) return `${at}: ${member} is not a timestamp`;
  }
  return {
    id: String(id),
    parentKey: String(Number(parent)),
    author: login,
    authorId: login,
    body: raw.body ?? "",
    createdAt: raw.created_at as string,
    updatedAt: raw.updated_at as string,
    version: null,
  };
}

/** Characters as GitHub counts them (code points). */
const characters = (text: string): number => [...text].length;

export class ForgeComments {
  constructor(private readonly options: ForgeCommentsOptions) {}

  private get rest() {
    return this.options.wire.rest;
  }

  /** "List issue comments for a repository", the query in a fixed order (kept validators are found by URL). */
  private listUrl(since?: string): string {
    const query: ListCommentsQuery = {
      sort: "updated",
      direction: "asc",
      per_page: PER_PAGE,
      ...(since === undefined ? {} : { since }),
    };
    return `${this.options.repoUrl}/issues/comments?${queryString(query)}`;
  }

  private commentUrl(id: string): string {
    return `${this.options.repoUrl}/issues/comments/${encodeURIComponent(id)}`;
  }

  private malformed(what: string, reason: string, status: number): SvcError {
    return new UnexpectedShapeError(
      `${this.options.wire.description}: ${what}: the server sent a malformed comment (${reason}); nothing was written`,
      status,
    );
  }

  /** The listing as the result-page walk reads it; `skipped` counts the comments `isIssue` left out. */
  private listing(isIssue: IsIssue, skipped: ServerComment[]): UpdatedListing<ServerComment> {
    return {
      url: (since) => this.listUrl(since),
      what: (since) =>
        `listing the issue comments of ${this.options.project}${since === undefined ? "" : ` changed since ${since}`}`,
      overlapMs: this.options.overlapMs,
      read: (value, what, status) => {
        if (!Array.isArray(value))
          throw new UnexpectedShapeError(
            `${this.options.wire.description}: ${what} answered without a list of comments`,
            status,
          );
        const comments: ServerComment[] = [];
        for (const item of value) {
          const comment = toServerComment(item);
          if (typeof comment === "string") throw this.malformed(what, comment, status);
          if (isIssue(comment.parentKey)) comments.push(comment);
          else skipped.push(comment);
        }
        return comments;
      },
      key: (comment) => comment.id,
      updatedAt: (comment) => comment.updatedAt,
    };
  }

  /** Every comment on an issue `isIssue` knows, and the next delta primed (all `304` when nothing changed). */
  async listAll(isIssue: IsIssue): Promise<CommentListing> {
    const skipped: ServerComment[] = [];
    const pages = await this.options.pages.listAll(this.listing(isIssue, skipped));
    return toCommentListing(pages, skipped);
  }

  /** The comments changed since `since` (inclusive), on issues `isIssue` knows. */
  async listChangedSince(since: string, isIssue: IsIssue): Promise<CommentListing> {
    const skipped: ServerComment[] = [];
    const pages = await this.options.pages.listChangedSince(this.listing(isIssue, skipped), since);
    return toCommentListing(pages, skipped);
  }

  /**
   * The comment as it is now (read conditionally: a `304` costs no quota), or undefined when it is gone
   * (404, while the repository itself still answers).
   */
  async read(id: string): Promise<ServerComment | undefined> {
    const what = `reading comment ${id}`;
    const answer = await this.options.pages.conditionalGet(this.commentUrl(id), what, "now");
    const status = answer.response.status;
    if (status === 404) {
      // A repository the token can no longer see answers 404 as well: that is no deleted comment.
      const repo = await this.rest.call("GET", this.options.repoUrl);
      if (repo.status !== 200) throw this.options.wire.failure(what, repo);
      return undefined;
    }
    if (answer.value === undefined) throw this.options.wire.failure(what, answer.response);
    const comment = toServerComment(answer.value);
    if (typeof comment === "string") throw this.malformed(what, comment, status);
    return comment;
  }

  /** A body over GitHub's limit, refused before any request. */
  private checkBody(body: string, what: string): void {
    const count = characters(body);
    if (count > MAX_COMMENT_CHARACTERS)
      throw new UserFacingError(
        "SVC_BACKEND",
        `${what}: the body has ${count} characters; the forge takes at most ${MAX_COMMENT_CHARACTERS} in a comment. Shorten it; nothing was written`,
        { data: { limit: MAX_COMMENT_CHARACTERS, characters: count } },
      );
  }

  /** The comment a write answered (`expected` its status). */
  private answered(what: string, response: RestResponse, expected: number): ServerComment {
    if (response.status !== expected) throw this.options.wire.failure(what, response);
    const comment = toServerComment(this.rest.parse<WireComment>(what, response));
    if (typeof comment === "string") throw this.malformed(what, comment, response.status);
    return comment;
  }

  /** A new comment on issue `parentKey` (`POST`, 201). A deleted issue (410) is said as such. */
  async create(parentKey: string, body: string): Promise<ServerComment> {
    const what = `posting a comment on issue ${parentKey}`;
    this.checkBody(body, what);
    const payload: CreateCommentBody = { body };
    const url = `${this.options.repoUrl}/issues/${encodeURIComponent(parentKey)}/comments`;
    const response = await this.rest.call("POST", url, payload);
    if (response.status === 410)
      throw new UserFacingError(
        "SVC_BACKEND",
        `${what}: issue ${parentKey} was deleted on the forge (410); nothing was written`,
        { data: { status: 410 } },
      );
    return this.answered(what, response, 201);
  }

  /**
   * The comment's new body, only if it is still as `base` read it (compare-before-write). A comment that
   * already has the body (a write whose answer was lost) is done, not a conflict with itself.
   */
  async update(id: string, body: string, base: BaseToken): Promise<CommentWriteOutcome> {
    const what = `updating comment ${id}`;
    this.checkBody(body, what);
    const found = await readForWrite(
      async () => {
        const comment = await this.read(id);
        return comment && { record: comment };
      },
      base,
      (current) => current.record.body === body,
    );
    if (found.kind !== "current") return found;
    if (found.value.record.body === body) return { kind: "ok", comment: found.value.record };
    const payload: UpdateCommentBody = { body };
    const response = await this.rest.call("PATCH", this.commentUrl(id), payload);
    if (response.status === 404) return { kind: "gone" };
    const comment = this.answered(what, response, 200);
    const etag = response.headers.etag;
    const store = this.options.wire.validators();
    // The answer is the comment as it now is: the next read of it may be a 304.
    if (etag && store)
      store.remember({ url: this.commentUrl(id), etag, payload: response.body.toString("utf8") });
    return { kind: "ok", comment };
  }

  /** Deletes the comment, only if it is still as `base` read it; one already gone is `gone`. */
  async remove(id: string, base: BaseToken): Promise<CommentDeleteOutcome> {
    const what = `deleting comment ${id}`;
    const found = await readForWrite(async () => {
      const comment = await this.read(id);
      return comment && { record: comment };
    }, base);
    if (found.kind !== "current") return found;
    const response = await this.rest.call("DELETE", this.commentUrl(id));
    if (response.status === 404) return { kind: "gone" };
    if (response.status !== 204) throw this.options.wire.failure(what, response);
    return { kind: "ok" };
  }

  /** The token's user's login (`GET /user`): whose comments are "yours". */
  async whoAmI(): Promise<string> {
    const what = "reading the token's user";
    const response = await this.rest.call("GET", `${this.options.wire.baseUrl}/user`);
    if (response.status !== 200) throw this.options.wire.failure(what, response);
    const user = this.rest.parse<WireAuthenticatedUser>(what, response);
    const login: unknown = isObject(user) ? user.login : undefined;
    if (typeof login !== "string" || login === "")
      throw new UnexpectedShapeError(
        `${this.options.wire.description}: ${what} answered ${response.status} without a login`,
        response.status,
      );
    return login;
  }
}

function toCommentListing(pages: Pages<ServerComment>, skipped: ServerComment[]): CommentListing {
  return {
    comments: pages.items,
    unchanged: pages.unchanged,
    validators: pages.validators,
    complete: pages.complete,
    skipped: skipped.length,
    skippedComments: skipped,
    ...(pages.replacesValidators === undefined ? {} : { replacesValidators: pages.replacesValidators }),
    ...(pages.cursorCeiling === undefined ? {} : { cursorCeiling: pages.cursorCeiling }),
  };
}
