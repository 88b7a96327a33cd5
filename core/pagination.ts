/**
 * The guard every paginated listing of every backend feeds its next-page pointers into (DESIGN.md §3: a
 * repeated cursor or next URL is an error; result pages per listing are capped, and so is its time). The
 * pointer is whatever the server hands back for the next result page: the wiki's `_links.next`, the forge's
 * `Link: <url>; rel="next"`, the tracker's `nextPageToken`. A listing makes one `PageWalk` (with its
 * first URL, when the pointers are URLs), and calls `walk.follow(next)` before each request after the
 * first; the walk throws instead of letting it ask again.
 *
 * Without it a server whose pointer repeats keeps the client asking forever (measured before: 21,000
 * requests in 30 s and the helper past 770 MB). Pointers are remembered by digest, so a hostile server
 * that sends huge ones costs 32 bytes a result page, and at most `maxPages` of them. Each response is
 * capped in bytes by the HTTP client (http.ts), so a listing reads at most `maxPages` such responses.
 *
 * Each request is bounded in time by the client (`SVC_HTTP_TIMEOUT_MS`), but 10,000 result pages that each
 * come just in time are days; and a server whose every pointer is new never repeats one. So a listing also
 * has a deadline (`ListingDeadline`): a walk checks it before each next result page, so a listing ends at
 * most one request past its budget.
 */
import { createHash } from "node:crypto";
import { excerpt, UserFacingError } from "./errors.js";
import { readCount, readDurationMs } from "./settings.js";

export const MAX_PAGES_SETTING = "SVC_MAX_RESULT_PAGES";
/**
 * Result pages per listing: 2.5 million wiki pages at 250 a page, a million issues at 100. A real listing
 * that needs more raises `SVC_MAX_RESULT_PAGES`; a server that never says "last page" is stopped here.
 */
export const DEFAULT_MAX_PAGES = 10_000;

/** `SVC_MAX_RESULT_PAGES`, else `DEFAULT_MAX_PAGES`; a bad value is a `SettingError`. */
export function maxPagesSetting(env: NodeJS.ProcessEnv = process.env): number {
  return readCount(MAX_PAGES_SETTING, env[MAX_PAGES_SETTING], { fallback: DEFAULT_MAX_PAGES, min: 1 });
}

export const LISTING_TIMEOUT_SETTING = "SVC_LISTING_TIMEOUT_MS";
/**
 * Ten minutes for one whole listing, every result page of it (for the simulator, its one streamed answer):
 * svc init of 1,000,000 simulator issues listed them in 47 s here (126 s in all, on a busy machine); at half
 * a second a result page, a paginated listing gets 1,200 of them (120,000 issues at 100 a page). A longer
 * listing raises `SVC_LISTING_TIMEOUT_MS`.
 */
export const DEFAULT_LISTING_TIMEOUT_MS = 600_000;

/** `SVC_LISTING_TIMEOUT_MS`, else `DEFAULT_LISTING_TIMEOUT_MS`; a bad value is a `SettingError`. */
export function listingTimeoutSetting(env: NodeJS.ProcessEnv = process.env): number {
  return readDurationMs(LISTING_TIMEOUT_SETTING, env[LISTING_TIMEOUT_SETTING], {
    unit: "ms",
    fallbackMs: DEFAULT_LISTING_TIMEOUT_MS,
    minMs: 1,
  });
}

/**
 * A listing that took longer than `SVC_LISTING_TIMEOUT_MS`. A server fault (http.ts `isServerFault`): the
 * server answered, but too slowly or without end; the caller uses none of the listing.
 */
export class ListingTimeoutError extends UserFacingError {}

export interface ListingDeadlineOptions {
  /** The server's origin, as the user knows it: `https://acme.atlassian.net`. */
  readonly server: string;
  /** What is being listed, for messages: `listing the pages of space DOCS`. */
  readonly listing: string;
  /** Default `listingTimeoutSetting()`. */
  readonly budgetMs?: number;
}

/** The time one listing may take, from when it began (this object's making) to its last result. */
export class ListingDeadline {
  private readonly budgetMs: number;
  private readonly endsAt: number;

  constructor(private readonly options: ListingDeadlineOptions) {
    this.budgetMs = options.budgetMs ?? listingTimeoutSetting();
    this.endsAt = Date.now() + this.budgetMs;
  }

  /**
   * Throws a `ListingTimeoutError` once the listing has run past its budget; `read` says what it read
   * (`12 result pages`).
   */
  check(read: string): void {
    if (Date.now() <= this.endsAt) return;
    const { server, listing } = this.options;
    throw new ListingTimeoutError(
      "SVC_BACKEND",
      `${listing} at ${server} did not end within ${this.budgetMs} ms (${LISTING_TIMEOUT_SETTING}, the ` +
        `longest svc gives one listing); svc stopped after ${read}. If the listing is really that long, ` +
        `run the command again with e.g. ${LISTING_TIMEOUT_SETTING}=${this.budgetMs * 2}; if not, is ${server} ` +
        "overloaded or stuck?",
      { data: { server, budgetMs: this.budgetMs } },
    );
  }
}

export interface PageWalkOptions {
  /** The server's origin, as the user knows it: `https://acme.atlassian.net`. */
  readonly server: string;
  /** What is being listed, for messages: `listing the pages of space DOCS`. */
  readonly listing: string;
  /** What the server calls its pointer to the next result page: `_links.next`, `nextPageToken`. */
  readonly pointer: string;
  /** The first request's own pointer (its URL), if it has one: a server that points back to it loops too. */
  readonly first?: string;
  /** Default `maxPagesSetting()`. */
  readonly maxPages?: number;
  /** Default `listingTimeoutSetting()`. */
  readonly budgetMs?: number;
}

/** A paginated listing that would not end: the server repeated a pointer, or kept going past the cap. */
export class PaginationError extends UserFacingError {}

export class PageWalk {
  private readonly maxPages: number;
  private readonly deadline: ListingDeadline;
  /** Digest of each pointer seen → the number of the result page it leads to (the first request's: 1). */
  private readonly seen = new Map<string, number>();
  /** Result pages read so far. */
  private pages = 1;

  constructor(private readonly options: PageWalkOptions) {
    this.maxPages = options.maxPages ?? maxPagesSetting();
    this.deadline = new ListingDeadline(options);
    if (options.first !== undefined) this.seen.set(digest(options.first), 1);
  }

  /**
   * Records that the result page just read points to `next`. Throws a `PaginationError` when `next` was
   * seen before in this walk, or when following it would read more than `maxPages` result pages; a
   * `ListingTimeoutError` when the listing has taken longer than its budget.
   */
  follow(next: string): void {
    const { server, listing, pointer } = this.options;
    const key = digest(next);
    const earlier = this.seen.get(key);
    if (earlier !== undefined) {
      const target = earlier === this.pages ? "to itself" : `back to result page ${earlier}`;
      throw new PaginationError(
        "SVC_BACKEND",
        `${listing} at ${server} goes round in a circle: result page ${this.pages} points ${target} ` +
          `(${pointer} ${excerpt(next, 160)}); svc stopped after ${this.pages} result pages ` +
          `instead of asking forever. The server (or a proxy in front of it) is at fault: report it to the ` +
          `admins of ${server}`,
        { data: { server, pointer: next.slice(0, 1000), pages: this.pages } },
      );
    }
    if (this.pages >= this.maxPages) {
      throw new PaginationError(
        "SVC_BACKEND",
        `${listing} at ${server} still points to a next result page (${pointer} ${excerpt(next, 160)}) ` +
          `after ${this.pages} result pages, the most svc reads in one listing ` +
          `(${MAX_PAGES_SETTING}=${this.maxPages}). If the listing is really that long, run the command ` +
          `again with e.g. ${MAX_PAGES_SETTING}=${this.maxPages * 2}; if not, report it to the admins of ${server}`,
        { data: { server, pages: this.pages, maxPages: this.maxPages } },
      );
    }
    this.deadline.check(`${this.pages} result page${this.pages === 1 ? "" : "s"}`);
    this.pages++;
    this.seen.set(key, this.pages);
  }
}

function digest(pointer: string): string {
  return createHash("sha256").update(pointer).digest("base64");
}
