/**
 * The tracker's issue comments (issue 34; Jira Cloud REST v3 "Issue comments"), as `ServerComment`s:
 * `parentKey` the issue key, `body` the comment's ADF as Markdown (adf.ts, lossless), `createdAt` and
 * `updatedAt` in the records' canonical form (issue.ts `canonicalTime`), `version` null (Jira keeps none),
 * `authorId` the account id of whoever wrote it, `author` `Display Name (accountId)`.
 *
 * What a listing costs (N issues listed, c comments on one issue, P comments a page):
 * - The comments come with the issues in the search: `POST /search/jql` with `fields: ["comment"]`, whose
 *   `comment` member of each issue is a `PageOfComments` (the issue's first comments and `total`): ⌈N/100⌉
 *   requests for every issue with at most P comments. Only an issue whose `total` is more than the comments
 *   sent costs `GET /issue/{key}/comment` pages (`startAt`, 100 a page, `orderBy=created`) for the rest:
 *   ⌈(c - P)/100⌉ more. The JQL is the records listing's (backend.ts): every issue of the project, or those
 *   updated since the cursor, since a comment written or edited moves its issue's `updated` (Jira does).
 * - A listing reads each listed issue's whole thread, so a comment of a listed issue that is not in the
 *   listing is deleted (`threads` names those issues). A deletion does not move the issue's `updated`
 *   (ASSUMPTION, the fake's too): a delta shows it only when the issue is listed for another reason.
 * - The search the records listing makes could carry the comments too (its `fields` plus `"comment"`, one
 *   search for both, at the price of larger result pages); `fromSearch` reads such a page's issues.
 *
 * Writes: `create` POSTs the Markdown as ADF (`markdownToAdf`); `update` and `remove` have no `If-Match` on
 * the wire, so the comment is read first and written only when its `updated` is still the base's
 * (backends/rest.ts `readForWrite`; the window between the two is the small race DESIGN.md §4 accepts).
 * Every body is refused before any write when it holds more than 32,767 characters of text. `whoAmI` asks
 * `GET /myself` once.
 */
import { isObject, jsonEqual } from "../../core/checks.js";
import { formatCount } from "../../core/count.js";
import { excerpt, type SvcError, UserFacingError } from "../../core/errors.js";
import type { BackendRecord, BaseToken } from "../backend.js";
import type { ServerComment } from "../comment.js";
import { type RestResponse, readForWrite, UnexpectedShapeError } from "../rest.js";
import { type AdfDoc, adfToMarkdown, markdownToAdf } from "./adf.js";
import { canonicalTime } from "./issue.js";
import { ISSUE_KEY, textLength } from "./schema.js";
import { searchPages, startAtListing, type TrackerSite } from "./search.js";
import type { CommentRequest, Myself, WireComment, WireCommentPage } from "./wire.js";

/** A comment's limit of text, as the tracker refuses it: "It exceeds the allowed limit of 32,767 characters". */
export const COMMENT_MAX_CHARACTERS = 32_767;
/** The most comments one `GET …/comment` page is asked for (the description's default). */
const COMMENT_PAGE_SIZE = 100;
const ACCOUNT_ID = /^[A-Za-z0-9:_-]{1,128}$/;
const COMMENT_ID = /^[0-9]{1,20}$/;

import type { CommentDeleteOutcome, CommentWriteOutcome } from "../backend.js";

export type { CommentDeleteOutcome, CommentWriteOutcome };

/** The comments of the issues a listing found. */
export interface TrackerCommentListing {
  /** Issue by issue in the search's order (by key), each thread oldest first. */
  readonly comments: readonly ServerComment[];
  /** Every listed issue's whole thread was read. */
  readonly complete: true;
  /** The issues listed: a comment of one of them that `comments` lacks is deleted on the server. */
  readonly threads: readonly string[];
}

export interface TrackerAccount {
  readonly accountId: string;
  readonly displayName: string;
}

/** A comment as read, with its ADF (to tell whether a write would change it) and its record for readForWrite. */
interface ReadComment {
  readonly comment: ServerComment;
  readonly adf: unknown;
  readonly record: BackendRecord;
}

/** Validates one `Comment` of the issue `parentKey`; returns the reason it is malformed, or the comment. */
export function parseComment(value: unknown, parentKey: string): ServerComment | string {
  if (!isObject(value)) return "a comment must be an object";
  const wire = value as WireComment;
  const id = wire.id;
  if (typeof id !== "string" || !COMMENT_ID.test(id)) return `bad comment id ${excerpt(String(id), 30)}`;
  const author = wire.author;
  const accountId = isObject(author) ? author.accountId : undefined;
  if (typeof accountId !== "string" || !ACCOUNT_ID.test(accountId))
    return `comment ${id}: author.accountId is not an account id`;
  const createdAt = canonicalTime(wire.created);
  const updatedAt = canonicalTime(wire.updated);
  if (createdAt === undefined) return `comment ${id}: created is not a timestamp`;
  if (updatedAt === undefined) return `comment ${id}: updated is not a timestamp`;
  const body: unknown = wire.body;
  if (!isObject(body) || body.type !== "doc") return `comment ${id}: body is not an ADF document`;
  let markdown: string;
  try {
    markdown = adfToMarkdown(body);
  } catch (error) {
    return `comment ${id}: body: ${error instanceof Error ? error.message : String(error)}`;
  }
  const name =
    typeof author?.displayName === "string" && author.displayName !== "" ? author.displayName : undefined;
  return {
    id,
    parentKey,
    author: `${name ?? "Unknown user"} (${accountId})`,
    authorId: accountId,
    body: markdown,
    createdAt,
    updatedAt,
    version: null,
  };
}

/**
 * Why the tracker cannot take `markdown` as a comment (empty, Markdown ADF cannot hold, too much text), or
 * undefined when it can.
 */
export function commentBodyProblem(markdown: string): string | undefined {
  let doc: AdfDoc | null;
  try {
    doc = markdownToAdf(markdown);
  } catch (error) {
    if (!(error instanceof UserFacingError)) throw error;
    return error.message;
  }
  const characters = doc === null ? 0 : textLength(doc);
  if (characters === 0) return "the comment is empty; write its text below the `---` line";
  return characters > COMMENT_MAX_CHARACTERS
    ? `the comment holds ${formatCount(characters)} characters of text; the tracker accepts at most ${formatCount(COMMENT_MAX_CHARACTERS)}`
    : undefined;
}

export class TrackerComments {
  private me: Promise<TrackerAccount> | undefined;

  /** `jqlFor(since)`: the records listing's JQL, of every issue or (with `since`) those updated since. */
  constructor(
    private readonly site: TrackerSite,
    private readonly jqlFor: (since?: string) => Promise<string>,
  ) {}

  /** Every comment of every issue of the project. */
  listAll(): Promise<TrackerCommentListing> {
    return this.list(undefined, "listing the comments of the project's issues");
  }

  /** Every comment of the issues updated since `since` (RFC 3339), which holds every comment changed since. */
  listChangedSince(since: string): Promise<TrackerCommentListing> {
    return this.list(since, `listing the comments of the issues updated since ${since}`);
  }

  private async list(since: string | undefined, what: string): Promise<TrackerCommentListing> {
    const jql = await this.jqlFor(since);
    const comments: ServerComment[] = [];
    const threads: string[] = [];
    for await (const page of searchPages(this.site, jql, ["comment"], what)) {
      const read = await this.fromSearch(page.issues, page.status);
      comments.push(...read.comments);
      threads.push(...read.threads);
    }
    return { comments, complete: true, threads };
  }

  /**
   * The comments of a search page's issues (asked with `comment` among the fields): each issue's `comment`
   * page, and the rest of its thread (`GET …/comment`) where its `total` says there is more.
   */
  async fromSearch(
    issues: readonly unknown[],
    status: number,
  ): Promise<{ comments: ServerComment[]; threads: string[] }> {
    const comments: ServerComment[] = [];
    const threads: string[] = [];
    for (const issue of issues) {
      const key = isObject(issue) ? issue.key : undefined;
      if (typeof key !== "string" || !ISSUE_KEY.test(key))
        throw this.malformed(`bad issue key ${excerpt(String(key), 40)}`, status);
      const fields = isObject(issue) ? issue.fields : undefined;
      const page = isObject(fields) ? fields.comment : undefined;
      if (!isObject(page))
        throw this.malformed(
          `${key}: the comment field is missing (was "comment" among the fields?)`,
          status,
        );
      comments.push(...(await this.thread(key, page as WireCommentPage, status)));
      threads.push(key);
    }
    return { comments, threads };
  }

  /** Issue `key`'s whole thread, oldest first: the page the search sent, and the rest where there is more. */
  private async thread(key: string, page: WireCommentPage, status: number): Promise<ServerComment[]> {
    const sent = this.parsePage(key, page, status);
    const startAt = typeof page.startAt === "number" ? page.startAt : 0;
    const total = page.total;
    if (typeof total !== "number" || (startAt === 0 && sent.length >= total)) return sent;
    // More than the page: the rest from where it ends (or all of it, when it is not the thread's start).
    const rest = await this.listIssue(key, startAt === 0 ? sent.length : 0);
    const byId = new Map([...sent, ...rest].map((comment) => [comment.id, comment]));
    return [...byId.values()].sort((a, b) => Number(a.id) - Number(b.id));
  }

  /**
   * The comments of issue `key` from `startAt` on, oldest first: `GET …/comment` pages, through the
   * pagination guard. An issue not found (or not visible) is the listing's failure, status 404.
   */
  async listIssue(key: string, startAt = 0): Promise<ServerComment[]> {
    const what = `listing the comments of ${key}`;
    return await startAtListing(
      this.site,
      what,
      (at) => `${this.commentsUrl(key)}?startAt=${at}&maxResults=${COMMENT_PAGE_SIZE}&orderBy=created`,
      (response) => {
        const page = this.site.rest.parse<WireCommentPage>(what, response);
        if (!isObject(page)) throw this.malformed("a comment page must be an object", response.status);
        return { items: this.parsePage(key, page, response.status), total: page.total };
      },
      startAt,
    );
  }

  /** Comment `id` of issue `key`, or undefined when either is not found. */
  async get(key: string, id: string): Promise<ServerComment | undefined> {
    return (await this.read(key, id))?.comment;
  }

  /** Posts `markdown` (as ADF) as a new comment on issue `key`, as the configured account. */
  async create(key: string, markdown: string): Promise<ServerComment> {
    const what = `commenting on issue ${key}`;
    const request: CommentRequest = { body: this.document(key, markdown) };
    const response = await this.site.mutate("POST", this.commentsUrl(key), request);
    if (response.status !== 201 && response.status !== 200) throw this.site.failure(what, response);
    return this.answered(key, what, response).comment;
  }

  /**
   * Replaces comment `id`'s body with `markdown`, if its `updated` is still `base.updatedAt` (read first:
   * the tracker has no `If-Match`). A comment already holding that body is left as it is (a write whose
   * answer was lost, pushed again).
   */
  async update(key: string, id: string, markdown: string, base: BaseToken): Promise<CommentWriteOutcome> {
    const doc = this.document(key, markdown);
    const found = await readForWrite(
      () => this.read(key, id),
      base,
      (current) => jsonEqual(current.adf, doc),
    );
    if (found.kind !== "current") return found;
    if (jsonEqual(found.value.adf, doc)) return { kind: "ok", comment: found.value.comment };
    const what = `updating comment ${id} of issue ${key}`;
    const request: CommentRequest = { body: doc };
    const response = await this.site.mutate("PUT", this.commentUrl(key, id), request);
    if (response.status === 404) return { kind: "gone" };
    if (response.status !== 200) throw this.site.failure(what, response);
    return { kind: "ok", comment: this.answered(key, what, response).comment };
  }

  /** Deletes comment `id` of issue `key` if its `updated` is still `base.updatedAt` (read first). */
  async remove(key: string, id: string, base: BaseToken): Promise<CommentDeleteOutcome> {
    const found = await readForWrite(() => this.read(key, id), base);
    if (found.kind !== "current") return found;
    const response = await this.site.mutate("DELETE", this.commentUrl(key, id));
    if (response.status === 204) return { kind: "ok" };
    if (response.status === 404) return { kind: "gone" };
    // "Delete comment" answers 204: a 200 (a proxy's page) is no deletion.
    throw this.site.failure(`deleting comment ${id} of issue ${key}`, response);
  }

  /** The configured account (`GET /myself`), asked once per client. */
  whoAmI(): Promise<TrackerAccount> {
    this.me ??= (async () => {
      const what = "asking who the configured account is (/myself)";
      const response = await this.site.call("GET", this.site.api("/myself"));
      if (response.status !== 200) throw this.site.failure(what, response);
      const value = this.site.rest.parse<Myself>(what, response);
      const accountId = isObject(value) ? value.accountId : undefined;
      if (typeof accountId !== "string" || !ACCOUNT_ID.test(accountId))
        throw new UnexpectedShapeError(
          `${this.site.description}: ${what} answered ${response.status} without an accountId`,
          response.status,
        );
      return { accountId, displayName: typeof value.displayName === "string" ? value.displayName : "" };
    })();
    this.me.catch(() => {
      this.me = undefined;
    });
    return this.me;
  }

  private commentsUrl(key: string): string {
    return this.site.api(`/issue/${encodeURIComponent(key)}/comment`);
  }

  private commentUrl(key: string, id: string): string {
    return `${this.commentsUrl(key)}/${encodeURIComponent(id)}`;
  }

  /** `markdown` as the ADF a write sends; a body the tracker cannot take is refused before any write. */
  private document(key: string, markdown: string): AdfDoc {
    const problem = commentBodyProblem(markdown);
    if (problem !== undefined)
      throw new UserFacingError("SVC_RECORD_INVALID", `a comment on issue ${key}: ${problem}`);
    return markdownToAdf(markdown) as AdfDoc;
  }

  private async read(key: string, id: string): Promise<ReadComment | undefined> {
    const what = `reading comment ${id} of issue ${key}`;
    const response = await this.site.call("GET", this.commentUrl(key, id));
    if (response.status === 404) return undefined;
    if (response.status !== 200) throw this.site.failure(what, response);
    return this.answered(key, what, response);
  }

  /** The comment an answer carries (a read's, or a write's), with its ADF and its record. */
  private answered(key: string, what: string, response: RestResponse): ReadComment {
    const value = this.site.rest.parse<WireComment>(what, response);
    const comment = parseComment(value, key);
    if (typeof comment === "string")
      throw new UnexpectedShapeError(
        `${this.site.description}: ${what} answered ${response.status} with a malformed comment (${comment})`,
        response.status,
      );
    const record: BackendRecord = {
      key: `comment:${comment.id}`,
      path: `comments/${key}/${comment.id}.md`,
      version: null,
      updatedAt: comment.updatedAt,
      content: { fields: { id: comment.id, author: comment.author }, body: comment.body },
      raw: { ...comment },
    };
    return { comment, adf: (value as { body?: unknown }).body, record };
  }

  private parsePage(key: string, page: WireCommentPage, status: number): ServerComment[] {
    if (page.comments !== undefined && !Array.isArray(page.comments))
      throw this.malformed(`${key}: comments is not a list`, status);
    return (page.comments ?? []).map((item) => {
      const comment = parseComment(item, key);
      if (typeof comment === "string") throw this.malformed(`${key}: ${comment}`, status);
      return comment;
    });
  }

  private malformed(reason: string, status: number): SvcError {
    return new UnexpectedShapeError(
      `${this.site.description}: the server sent a malformed comment (${reason}); nothing was written`,
      status,
    );
  }
}
