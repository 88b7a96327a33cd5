/**
 * The wiki's footer comments (issue 34; Confluence Cloud REST v2; inline comments stay out, Document 3 defers
 * them), as `ServerComment`s: `parentKey` is the page id, `body` the storage XHTML byte for byte, `version`
 * the comment's version number, `authorId` the account id of whoever wrote version 1, `author`
 * `Display Name (accountId)`.
 *
 * What each read costs (N pages in the space, M footer comments on the whole site, c on one page):
 * - `listAll`: the site-wide `GET /footer-comments?body-format=storage&sort=created-date&limit=250`, kept to
 *   the pages asked for: ⌈M/250⌉ requests whatever N is. The description has no filter by space or page on
 *   it, so a site with far more comments elsewhere than in this space pays for those too; `listPage`
 *   (`GET /pages/{id}/footer-comments`, ⌈c/250⌉ requests a page, N at least for a whole space) is the other
 *   way, and the one that reads a single page.
 * - `listChangedSince`: the description offers no `since` on any comment listing; the site-wide listing
 *   sorted newest first (`sort=-modified-date`), stopped at the first comment older than `since`, is the
 *   delta: ⌈changed/250⌉ requests (at least one). ASSUMPTION: the modified date it sorts by is the latest
 *   version's `createdAt` (the description does not say); the caller's overlap (the cursor minus a window)
 *   covers ordering slack, as for pages. A deleted comment is gone for good on the vendor (the
 *   description: "cannot be reverted"), so no delta shows it: only a full listing finds it gone.
 * - Besides the listing: a comment's version carries only its latest version's time and author, so a
 *   comment edited since it was written (version > 1) costs one `GET /footer-comments/{id}/versions` for
 *   when and by whom it was written, unless the caller already knows (`CommentOrigins`: those never
 *   change). Display names cost one `POST /users-bulk` per 250 accounts not asked before (kept per client);
 *   never one request per comment.
 *
 * Writes: `create` POSTs `{pageId, body}`; `update` PUTs with `version.number` = the base version + 1, which
 * the vendor refuses with 409 when the comment changed since (a conflict); `remove` has no such condition on
 * the wire (DELETE takes none), so it reads the comment first and deletes only when its version is still the
 * base's (compare-before-write; the window between the two is the small race DESIGN.md §4 accepts).
 * `whoAmI` asks v1's `GET /wiki/rest/api/user/current` (v2 has no operation for the calling user) once.
 */
import { isObject, RFC3339 } from "../../core/checks.js";
import { excerpt, SvcError } from "../../core/errors.js";
import type { ServerComment } from "../comment.js";
import type { RestResponse } from "../rest.js";
import { UnexpectedShapeError } from "../rest.js";
import { digits } from "./content-id.js";
import { PAGE_LIMIT, paginate, type WikiSite } from "./pagination.js";
import type {
  BulkUsersBody,
  CreateFooterCommentBody,
  UpdateFooterCommentBody,
  WireCommentVersion,
  WireCurrentUser,
  WireFooterComment,
  WireUsers,
} from "./wire.js";

/**
 * The largest comment body svc sends. ASSUMPTION: the vendor documents no limit of its own for a comment;
 * this is the request size its pages are held to (backend.ts `maxRecordBytes`).
 */
export const MAX_COMMENT_BYTES = 5 * 1024 * 1024;

/** When and by whom a comment was written (its version 1): they never change, so a caller may keep them. */
export interface CommentOrigin {
  readonly createdAt: string;
  readonly authorId: string;
}

/** The origins the caller already knows, by comment id. */
export type CommentOrigins = (id: string) => CommentOrigin | undefined;

import type { CommentDeleteOutcome, CommentWriteOutcome } from "../backend.js";

export type { CommentDeleteOutcome, CommentWriteOutcome };

export interface WikiAccount {
  readonly accountId: string;
  readonly displayName: string;
}

/** A comment as read from the wire, before its origin and its author's name are known. */
interface Parsed {
  readonly id: string;
  readonly pageId: string | undefined;
  readonly body: string;
  readonly version: number;
  readonly updatedAt: string;
  readonly editorId: string;
}

/** A comment on a page: the only kind svc keeps. */
type OnPage = Parsed & { readonly pageId: string };

const onPage = (comment: Parsed): comment is OnPage => comment.pageId !== undefined;

const ACCOUNT_ID = /^[A-Za-z0-9:_-]{1,128}$/;
const NO_ORIGINS: CommentOrigins = () => undefined;

/** Validates one footer comment of the v2 API; returns the reason it is malformed, or what svc keeps of it. */
export function parseFooterComment(value: unknown): Parsed | string {
  if (!isObject(value)) return "a comment must be an object";
  const wire = value as WireFooterComment;
  const id = digits(wire.id);
  if (!id) return `bad comment id ${excerpt(String(wire.id), 30)}`;
  const pageId = wire.pageId === undefined ? undefined : digits(wire.pageId);
  if (wire.pageId !== undefined && pageId === undefined) return `comment ${id}: pageId is not an id`;
  const version = wire.version;
  if (!isObject(version) || typeof version.number !== "number" || !Number.isSafeInteger(version.number))
    return `comment ${id}: version.number is missing`;
  if (typeof version.createdAt !== "string" || !RFC3339.test(version.createdAt))
    return `comment ${id}: version.createdAt is not a timestamp`;
  if (typeof version.authorId !== "string" || !ACCOUNT_ID.test(version.authorId))
    return `comment ${id}: version.authorId is not an account id`;
  const body = wire.body?.storage?.value;
  if (typeof body !== "string")
    return `comment ${id}: body.storage.value is missing (was body-format=storage sent?)`;
  return {
    id,
    pageId,
    body,
    version: version.number,
    updatedAt: version.createdAt,
    editorId: version.authorId,
  };
}

export class WikiComments {
  /** Account id → display name, for every account asked about (or met as the caller) by this client. */
  private readonly names = new Map<string, string | undefined>();
  private me: WikiAccount | undefined;

  constructor(private readonly site: WikiSite) {}

  /**
   * Every footer comment on the pages `pageIds` names, oldest first: the site-wide listing, kept to those
   * pages (comments on blog posts, attachments and other spaces' pages are skipped).
   */
  async listAll(pageIds: Iterable<string>, known: CommentOrigins = NO_ORIGINS): Promise<ServerComment[]> {
    const wanted = new Set(pageIds);
    const parsed = await this.walk(
      `/wiki/api/v2/footer-comments?body-format=storage&sort=created-date&limit=${PAGE_LIMIT}`,
      "listing the footer comments",
      (comment): comment is OnPage => onPage(comment) && wanted.has(comment.pageId),
    );
    return this.complete(parsed, known);
  }

  /**
   * The footer comments on `pageIds` changed (written or edited) at or after `since`, newest first: the
   * site-wide listing sorted by modified date, from the newest, stopped at the first one older than `since`.
   * A deleted comment does not show (see the file's comment).
   */
  async listChangedSince(
    since: string,
    pageIds: Iterable<string>,
    known: CommentOrigins = NO_ORIGINS,
  ): Promise<ServerComment[]> {
    const wanted = new Set(pageIds);
    const parsed = await this.walk(
      `/wiki/api/v2/footer-comments?body-format=storage&sort=-modified-date&limit=${PAGE_LIMIT}`,
      "listing the footer comments changed since the last sync",
      (comment): comment is OnPage => onPage(comment) && wanted.has(comment.pageId),
      (comment) => comment.updatedAt < since,
    );
    return this.complete(parsed, known);
  }

  /**
   * The footer comments of one page, oldest first (`GET /pages/{id}/footer-comments`). A page that is not
   * found (or not readable) is the listing's failure, status 404.
   */
  async listPage(pageId: string, known: CommentOrigins = NO_ORIGINS): Promise<ServerComment[]> {
    const parsed = await this.walk(
      `/wiki/api/v2/pages/${encodeURIComponent(pageId)}/footer-comments?body-format=storage&sort=created-date&limit=${PAGE_LIMIT}`,
      `listing the footer comments of page ${pageId}`,
      (_comment): _comment is Parsed => true,
    );
    // PageCommentModel may leave `pageId` out: the page asked for is the comment's.
    return this.complete(
      parsed.map((comment) => ({ ...comment, pageId })),
      known,
    );
  }

  /**
   * One comment, or undefined when it is not found (deleted, or its page no longer readable) or is not on a
   * page (a blog post's, an attachment's).
   */
  async get(id: string, known: CommentOrigins = NO_ORIGINS): Promise<ServerComment | undefined> {
    const what = `reading footer comment ${id}`;
    const response = await this.site.call(
      "GET",
      `/wiki/api/v2/footer-comments/${encodeURIComponent(id)}?body-format=storage`,
    );
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw this.site.rest.failure(what, response);
    const parsed = this.parseAnswer(what, response);
    return onPage(parsed) ? (await this.complete([parsed], known))[0] : undefined;
  }

  /** Posts `body` (storage XHTML) as a new footer comment on page `pageId`, as the configured account. */
  async create(pageId: string, body: string): Promise<ServerComment> {
    const what = `creating a footer comment on page ${pageId}`;
    const request: CreateFooterCommentBody = { pageId, body: { representation: "storage", value: body } };
    const response = await this.site.call("POST", "/wiki/api/v2/footer-comments", request);
    if (response.status !== 201 && response.status !== 200) throw this.site.rest.failure(what, response);
    return this.written(what, response, pageId, NO_ORIGINS);
  }

  /**
   * Replaces comment `id`'s body, conditional on `baseVersion` (the version svc last read): the PUT names
   * `baseVersion + 1`, which the vendor refuses with 409 when the comment has changed since.
   */
  async update(
    id: string,
    body: string,
    baseVersion: number,
    known: CommentOrigins = NO_ORIGINS,
  ): Promise<CommentWriteOutcome> {
    const what = `updating footer comment ${id}`;
    const request: UpdateFooterCommentBody = {
      version: { number: baseVersion + 1, message: "svc push" },
      body: { representation: "storage", value: body },
    };
    const response = await this.site.call(
      "PUT",
      `/wiki/api/v2/footer-comments/${encodeURIComponent(id)}`,
      request,
    );
    if (response.status === 409) return { kind: "conflict", current: `a version after ${baseVersion}` };
    if (response.status === 404) return { kind: "gone" };
    if (response.status !== 200) throw this.site.rest.failure(what, response);
    return { kind: "ok", comment: await this.written(what, response, undefined, known) };
  }

  /**
   * Deletes comment `id` (for good: the vendor keeps no trash of comments) if it is still at `baseVersion`:
   * read first, then DELETE (compare-before-write; DELETE takes no version).
   */
  async remove(id: string, baseVersion: number): Promise<CommentDeleteOutcome> {
    const what = `reading footer comment ${id}`;
    const read = await this.site.call("GET", `/wiki/api/v2/footer-comments/${encodeURIComponent(id)}`);
    if (read.status === 404) return { kind: "gone" };
    if (read.status !== 200) throw this.site.rest.failure(what, read);
    const value = this.site.rest.parse<WireFooterComment>(what, read);
    const version = isObject(value) && isObject(value.version) ? value.version.number : undefined;
    if (typeof version !== "number")
      throw new UnexpectedShapeError(
        `${this.site.description}: ${what} answered ${read.status} without version.number`,
        read.status,
      );
    if (version !== baseVersion) return { kind: "conflict", current: `version ${version}` };
    const response = await this.site.call("DELETE", `/wiki/api/v2/footer-comments/${encodeURIComponent(id)}`);
    if (response.status === 204) return { kind: "ok" };
    if (response.status === 404) return { kind: "gone" };
    throw this.site.rest.failure(`deleting footer comment ${id}`, response);
  }

  /** The configured account (v1 `GET /wiki/rest/api/user/current`), asked once per client. */
  async whoAmI(): Promise<WikiAccount> {
    if (this.me) return this.me;
    const what = "asking who the configured account is";
    const response = await this.site.call("GET", "/wiki/rest/api/user/current");
    if (response.status !== 200) throw this.site.rest.failure(what, response);
    const value = this.site.rest.parse<WireCurrentUser>(what, response);
    const accountId = isObject(value) ? value.accountId : undefined;
    if (typeof accountId !== "string" || !ACCOUNT_ID.test(accountId))
      throw new UnexpectedShapeError(
        `${this.site.description}: ${what} answered ${response.status} without an accountId`,
        response.status,
      );
    const displayName = typeof value.displayName === "string" ? value.displayName : "";
    this.names.set(accountId, displayName === "" ? undefined : displayName);
    this.me = { accountId, displayName };
    return this.me;
  }

  /** The parsed comments of a walk, those `keep` wants, until `stop` says so. */
  private async walk<T extends Parsed>(
    first: string,
    what: string,
    keep: (comment: Parsed) => comment is T,
    stop?: (comment: Parsed) => boolean,
  ): Promise<T[]> {
    const kept: T[] = [];
    for await (const item of paginate(this.site, first, what)) {
      const parsed = parseFooterComment(item);
      if (typeof parsed === "string")
        throw new SvcError(
          "SVC_BACKEND",
          `${this.site.description}: the server sent a malformed footer comment (${parsed}); nothing was written`,
        );
      if (stop?.(parsed)) break;
      if (keep(parsed)) kept.push(parsed);
    }
    return kept;
  }

  /**
   * The comment a write answered. The description does not say the answer carries the body or the page (both
   * optional): without them, the comment is read back.
   */
  private async written(
    what: string,
    response: RestResponse,
    pageId: string | undefined,
    known: CommentOrigins,
  ): Promise<ServerComment> {
    const value = this.site.rest.parse(what, response);
    const parsed = parseFooterComment(value);
    const page = typeof parsed === "string" ? undefined : (parsed.pageId ?? pageId);
    if (typeof parsed !== "string" && page !== undefined) {
      const [comment] = await this.complete([{ ...parsed, pageId: page }], known);
      return comment as ServerComment;
    }
    const id = isObject(value) ? digits(value.id) : undefined;
    if (id === undefined)
      throw new UnexpectedShapeError(
        `${this.site.description}: ${what} answered ${response.status} without a comment id`,
        response.status,
      );
    const fresh = await this.get(id, known);
    if (!fresh)
      throw new SvcError(
        "SVC_BACKEND",
        `${this.site.description}: footer comment ${id} vanished right after it was written`,
      );
    return fresh;
  }

  private parseAnswer(what: string, response: RestResponse): Parsed {
    const parsed = parseFooterComment(this.site.rest.parse(what, response));
    if (typeof parsed === "string")
      throw new UnexpectedShapeError(
        `${this.site.description}: ${what} answered ${response.status} with a malformed footer comment (${parsed})`,
        response.status,
      );
    return parsed;
  }

  /** The comments with their origins (asked only for edited ones the caller does not know) and authors' names. */
  private async complete(parsed: readonly OnPage[], known: CommentOrigins): Promise<ServerComment[]> {
    const origins = new Map<string, CommentOrigin>();
    for (const comment of parsed) {
      const origin =
        known(comment.id) ??
        (comment.version === 1
          ? { createdAt: comment.updatedAt, authorId: comment.editorId }
          : await this.origin(comment.id));
      origins.set(comment.id, origin);
    }
    await this.learnNames([...origins.values()].map((origin) => origin.authorId));
    return parsed.map((comment) => {
      const origin = origins.get(comment.id) as CommentOrigin;
      const name = this.names.get(origin.authorId);
      return {
        id: comment.id,
        parentKey: comment.pageId,
        author: `${name ?? "Unknown user"} (${origin.authorId})`,
        authorId: origin.authorId,
        body: comment.body,
        createdAt: origin.createdAt,
        updatedAt: comment.updatedAt,
        version: comment.version,
      };
    });
  }

  /** Version 1 of comment `id`: `GET /footer-comments/{id}/versions?sort=modified-date&limit=1`. */
  private async origin(id: string): Promise<CommentOrigin> {
    const what = `reading the first version of footer comment ${id}`;
    const response = await this.site.call(
      "GET",
      `/wiki/api/v2/footer-comments/${encodeURIComponent(id)}/versions?sort=modified-date&limit=1`,
    );
    if (response.status !== 200) throw this.site.rest.failure(what, response);
    const value = this.site.rest.parse(what, response);
    const first = (isObject(value) && Array.isArray(value.results) ? value.results[0] : undefined) as
      | WireCommentVersion
      | undefined;
    if (
      !isObject(first) ||
      typeof first.createdAt !== "string" ||
      !RFC3339.test(first.createdAt) ||
      typeof first.authorId !== "string" ||
      !ACCOUNT_ID.test(first.authorId)
    )
      throw new UnexpectedShapeError(
        `${this.site.description}: ${what} answered ${response.status} without a version's createdAt and authorId`,
        response.status,
      );
    return { createdAt: first.createdAt, authorId: first.authorId };
  }

  /** Asks `POST /users-bulk` (250 at a time) for the names of the accounts not asked about before. */
  private async learnNames(accountIds: readonly string[]): Promise<void> {
    const unknown = [...new Set(accountIds)].filter((id) => !this.names.has(id));
    for (let start = 0; start < unknown.length; start += 250) {
      const chunk = unknown.slice(start, start + 250);
      const request: BulkUsersBody = { accountIds: chunk };
      const what = "reading the names of the comments' authors";
      const response = await this.site.call("POST", "/wiki/api/v2/users-bulk", request);
      for (const id of chunk) this.names.set(id, undefined);
      // 404: the account may not view user profiles; the authors are then written without their names.
      if (response.status === 404) continue;
      if (response.status !== 200) throw this.site.rest.failure(what, response);
      const value = this.site.rest.parse<WireUsers>(what, response);
      for (const user of isObject(value) && Array.isArray(value.results) ? value.results : []) {
        if (isObject(user) && typeof user.accountId === "string" && typeof user.displayName === "string")
          this.names.set(user.accountId, user.displayName);
      }
    }
  }
}
