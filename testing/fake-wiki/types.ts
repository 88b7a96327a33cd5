/**
 * The fake wiki's public names: its options (spaces, the hostile listings, the rate limit), the copies of its
 * state the test helpers hand out, the request log entry, the vendor's error body and the `FakeWiki` interface
 * tests drive (testing/fake-wiki.ts re-exports them all).
 */
import type { FakeRequestBase } from "../fake-server.js";
import type { ContractWatch } from "../vendor-contract.js";

export type SpaceType = "global" | "collaboration" | "knowledge_base" | "personal";
export type PageStatus = "current" | "archived" | "trashed";

export interface FakeWikiSpaceSpec {
  /** The raw space key, e.g. `SVC`. */
  readonly key: string;
  readonly name?: string;
  /**
   * The space's active alias (`currentActiveAlias`); defaults to the key, which is what the vendor reports for
   * a space that never had another alias.
   */
  readonly alias?: string;
  readonly type?: SpaceType;
  readonly status?: "current" | "archived";
  readonly description?: string;
  /** Create a homepage (`homepageId`) that new root pages hang under. Off by default so page counts stay exact. */
  readonly homepage?: boolean;
  /**
   * The account sees the space in `GET /spaces` but may not read or write its pages: every page request in it
   * is answered with `deniedStatus`.
   */
  readonly denied?: boolean;
}

/**
 * A hostile listing, for the client's pagination and size guards (issue 11). It applies to the paginated
 * listing `on` names: `pages` (`GET /spaces/{id}/pages`, the default) or `spaces` (`GET /spaces` without
 * `keys`/`ids`, so that looking a space up by key still works).
 * - `repeat-cursor`: the cursor is ignored (every answer is the first result page again) and every answer's
 *   `_links.next` names the same cursor, as a server whose cursor handling is broken does.
 * - `endless`: every answer names a new cursor, forever; the answers after the first have no results.
 * - `oversized`: the answer is `bytes` bytes of JSON (whitespace inside `{"results":[ … ]}`), streamed with
 *   backpressure; with `announce`, `content-length` says so up front. `streamed()` tells how much was sent.
 */
export type HostileListing =
  | { readonly kind: "repeat-cursor"; readonly on?: "pages" | "spaces" }
  | { readonly kind: "endless"; readonly on?: "pages" | "spaces" }
  | {
      readonly kind: "oversized";
      readonly on?: "pages" | "spaces";
      readonly bytes: number;
      readonly announce?: boolean;
    };

/** One oversized answer, once its connection closed. */
export interface StreamedAnswer {
  /** Bytes handed to the socket (with backpressure: at most one chunk more than the kernel took). */
  readonly bytesWritten: number;
  /** The client closed the connection before the whole answer was sent. */
  readonly closedEarly: boolean;
}

export interface FakeWikiOptions {
  /** The account's email; default `svc-fake@example.test`. */
  readonly email?: string;
  /** The account's API token; default `fake-api-token-0123456789`. */
  readonly token?: string;
  /** Default: one readable space `SVC`. */
  readonly spaces?: readonly FakeWikiSpaceSpec[];
  /**
   * What `_links.base` and the `rel="base"` link say. `"hostile"` (default): a second loopback server that
   * counts its hits. `"self"`: this server's `/wiki`, like the vendor. Anything else is sent as is.
   */
  readonly linksBase?: string;
  /**
   * The status for pages of a `denied` space. 403 is what Document 3 says; the vendor's reference documents
   * 404 ("does not have permission to view … or was not found") for the page endpoints.
   */
  readonly deniedStatus?: 403 | 404;
  /** Requests per window before the fake's own limiter answers 429; default 10,000 (never, in practice). */
  readonly rateLimitQuota?: number;
  readonly rateLimitWindowMs?: number;
  /** Id of the first page created; default 1, so globs like `pages/12*` select a known subset. */
  readonly firstPageId?: number;
  /** Id of the first footer comment created; default 3,200,001. */
  readonly firstCommentId?: number;
  /** Clock for timestamps of live changes (ms since the epoch); default `Date.now`. */
  readonly now?: () => number;
  /** Default: none, every listing is honest. `setHostileListing` changes it later. */
  readonly hostileListing?: HostileListing;
}

export interface FakeWikiVersion {
  readonly number: number;
  /** RFC 3339 UTC with milliseconds, as the vendor writes it. */
  readonly createdAt: string;
  readonly message: string;
  readonly minorEdit: boolean;
  readonly authorId: string;
}

/** The server's state of one page (a copy; changing it changes nothing). */
export interface FakeWikiPage {
  readonly id: string;
  readonly status: PageStatus;
  readonly title: string;
  readonly spaceId: string;
  readonly parentId: string | null;
  readonly parentType: "page" | null;
  readonly position: number | null;
  readonly authorId: string;
  readonly ownerId: string;
  readonly lastOwnerId: string | null;
  readonly createdAt: string;
  readonly version: FakeWikiVersion;
  /** `body.storage.value`, byte for byte. */
  readonly body: string;
}

/** The server's state of one footer comment (a copy). */
export interface FakeWikiComment {
  readonly id: string;
  readonly pageId: string;
  /** `body.storage.value`, byte for byte. */
  readonly body: string;
  /** Version 1's: when and by whom the comment was written. */
  readonly createdAt: string;
  readonly authorId: string;
  /** The current version (its `authorId`: whoever wrote it last). */
  readonly version: FakeWikiVersion;
}

/** An account the fake knows, as `POST /users-bulk` and v1 `GET /user/current` answer it. */
export interface FakeWikiAccount {
  readonly accountId: string;
  readonly displayName: string;
}

export interface FakeWikiSpace {
  readonly id: string;
  readonly key: string;
  readonly alias: string;
  readonly name: string;
  readonly type: SpaceType;
  readonly status: "current" | "archived";
  readonly description: string;
  readonly homepageId: string | null;
  readonly denied: boolean;
  readonly createdAt: string;
}

export interface FakeWikiRequest extends FakeRequestBase {
  /** The body answered (utf8); empty while in flight, when there was none, or for a streamed answer. */
  readonly answer: string;
}

export interface PageChanges {
  readonly title?: string;
  readonly body?: string;
  readonly message?: string;
  readonly parentId?: string | null;
}

export interface FakeWiki {
  /** The tenant base URL to configure (`SVC_WIKI_BASE_URL`): `http://127.0.0.1:<port>`, no path. */
  readonly url: string;
  /** The origin to put on the egress allowlist (same string as `url`). */
  readonly origin: string;
  /** `<url>/wiki/api/v2`. */
  readonly apiBase: string;
  /** What `_links.base` says. */
  readonly linksBase: string;
  readonly credentials: { readonly email: string; readonly token: string };
  /** `Basic base64(email:token)` for the configured account. */
  readonly authorization: string;
  /** Every request this server received, oldest first. */
  readonly requests: readonly FakeWikiRequest[];
  /** Requests received by the hostile `_links.base` server (0 unless someone followed `_links.base`). */
  readonly baseHits: number;
  readonly baseRequests: readonly FakeWikiRequest[];
  /**
   * Answers the next `count` requests with 429, `Retry-After: <retryAfterSeconds>` and
   * `x-ratelimit-remaining: 0`, before authentication is checked.
   */
  setRateLimit(count: number, retryAfterSeconds: number): void;
  /** From now on, the listing it names is hostile (`undefined`: honest again). */
  setHostileListing(listing: HostileListing | undefined): void;
  /** Every `oversized` answer so far, once its connection has closed. */
  streamed(): Promise<StreamedAnswer[]>;
  /** Creates `count` current pages with tricky storage bodies in the space; returns their ids in order. */
  seedPages(spaceKey: string, count: number): string[];
  /** Creates one current page (version 1) server-side. */
  createPage(spaceKey: string, page: { title: string; body: string; parentId?: string | null }): FakeWikiPage;
  /** Someone else edits the page in the browser: version + 1 with a fresh `version.createdAt`. */
  editPage(id: string, changes?: PageChanges): FakeWikiPage;
  /** Someone else deletes the page: it moves to the trash. */
  trashPage(id: string): void;
  /** Someone else archives the page (status `archived`). */
  archivePage(id: string): void;
  /** Someone labels the page (global prefix), as the v1 label endpoint does. */
  labelPage(id: string, name: string): void;
  /** The page's label names, in the order they were added. */
  labels(id: string): string[];
  page(id: string): FakeWikiPage | undefined;
  /** The configured account (whose comments svc may edit) and the default "someone else". */
  readonly self: FakeWikiAccount;
  readonly someoneElse: FakeWikiAccount;
  /** Makes another account known (its display name), for comments by a third person. */
  addAccount(account: FakeWikiAccount): void;
  /**
   * Someone writes a footer comment on the page (version 1, stamped now); by `someoneElse` unless
   * `authorId` says otherwise (`self.accountId`: as svc's own account, without svc).
   */
  addComment(pageId: string, body: string, options?: { authorId?: string }): FakeWikiComment;
  /** `count` comments on each of `pageIds`, by `someoneElse` unless `authorId` says; returns their ids in order. */
  seedComments(pageIds: readonly string[], count: number, options?: { authorId?: string }): string[];
  /** The comment's author edits it in the browser: version + 1, stamped now (by `authorId` if given). */
  editComment(id: string, body?: string, options?: { authorId?: string }): FakeWikiComment;
  /** Someone deletes the comment (for good, as the vendor does). */
  deleteComment(id: string): void;
  comment(id: string): FakeWikiComment | undefined;
  /** The page's footer comments by id. */
  comments(pageId: string): FakeWikiComment[];
  /** The space's pages by id; trashed ones only with `includeTrashed`. */
  pages(spaceKey: string, options?: { includeTrashed?: boolean }): FakeWikiPage[];
  space(keyOrAlias: string): FakeWikiSpace;
  /**
   * Every exchange judged against the vendor's description as it happened (testing/vendor-contract.ts);
   * `close()` fails naming each departure.
   */
  readonly contract: ContractWatch;
  /** Closes the server; rejects, naming them, when any exchange departed from the vendor's description. */
  close(): Promise<void>;
}

/** The vendor's v2 error envelope (third-party recordings; the OpenAPI document gives error bodies no schema). */
export interface VendorErrorBody {
  readonly errors: readonly {
    readonly status: number;
    readonly code: string;
    readonly title: string;
    readonly detail: string | null;
  }[];
}
