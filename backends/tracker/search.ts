/**
 * The tracker's one issue search (`POST /rest/api/3/search/jql`, "enhanced search"): the result pages of a
 * JQL query with the `fields` asked for, following `nextPageToken` through the pagination guard
 * (core/pagination.ts: a repeated token, or too many result pages, is an error). The records listing asks
 * for the record's fields (issue.ts RECORD_FIELDS), the comment listing for `comment` (comments.ts); each
 * reads the issues of a page its own way.
 */
import type { SvcError } from "../../core/errors.js";
import { PageWalk } from "../../core/pagination.js";
import { AN_OBJECT, type RestClient, type RestResponse, UnexpectedShapeError } from "../rest.js";
import type { SearchRequest, SearchResults } from "./wire.js";

/** The most issues one result page is asked for (the server may send fewer). */
export const PAGE_SIZE = 100;

/** What a tracker request needs: the site, how to name it in messages, and its requests. */
export interface TrackerSite {
  /** `https://acme.atlassian.net`. */
  readonly origin: string;
  /** `tracker project TEST at https://…`: the start of a message about an answer. */
  readonly description: string;
  readonly rest: RestClient;
  /** `https://…/rest/api/3<path>`. */
  api(path: string): string;
  call(method: string, url: string, body?: unknown): Promise<RestResponse>;
  /** A write, spaced from the one before (backend.ts `MUTATION_GAP_MS`). */
  mutate(method: string, url: string, body?: unknown): Promise<RestResponse>;
  /** A refusal or an unexpected answer as an error; 4xx refusals carry the tracker's own words. */
  failure(what: string, response: RestResponse): SvcError;
  /** Throws the error that says the project is unknown or hidden, when it is; `what` begins it. */
  checkProject(what: string): Promise<unknown>;
}

/** One result page: its issues as sent (each read by the caller) and the server's `Date`. */
export interface SearchPage {
  readonly issues: readonly unknown[];
  readonly date: string | undefined;
  readonly status: number;
}

/** One result page of `jql` and the token of the next (undefined on the last). */
async function searchPage(
  site: TrackerSite,
  request: SearchRequest,
  what: string,
): Promise<SearchPage & { next: string | undefined }> {
  const response = await site.call("POST", site.api("/search/jql"), request);
  if (response.status === 400 || response.status === 404) {
    // An unknown project, or one the account may not browse, is a JQL error: say which it is.
    await site.checkProject(what);
  }
  if (response.status !== 200) throw site.failure(what, response);
  const value = site.rest.parse<SearchResults>(what, response, AN_OBJECT);
  // Optional in the description, but an answer without the list says nothing of the issues.
  if (!Array.isArray(value.issues))
    throw new UnexpectedShapeError(
      `${site.description}: ${what} answered without a list of issues`,
      response.status,
    );
  const next =
    typeof value.nextPageToken === "string" && value.nextPageToken !== "" ? value.nextPageToken : undefined;
  if (next === undefined && value.isLast === false)
    throw new UnexpectedShapeError(
      `${site.description}: ${what}: the server said more result pages follow (isLast: false) but sent no nextPageToken; the listing stopped without a result`,
      response.status,
    );
  return {
    issues: value.issues,
    date: response.headers.date,
    status: response.status,
    next: value.isLast === true ? undefined : next,
  };
}

/**
 * Every result page of `jql` with `fields`, first to last; the caller may stop early (`break`), and then
 * asks no further page.
 */
export async function* searchPages(
  site: TrackerSite,
  jql: string,
  fields: readonly string[],
  what: string,
): AsyncGenerator<SearchPage> {
  const walk = new PageWalk({ server: site.origin, listing: what, pointer: "nextPageToken" });
  let token: string | undefined;
  for (;;) {
    const request: SearchRequest = {
      jql,
      fields: [...fields],
      maxResults: PAGE_SIZE,
      ...(token === undefined ? {} : { nextPageToken: token }),
    };
    const page = await searchPage(site, request, what);
    yield page;
    if (page.next === undefined) return;
    walk.follow(page.next);
    token = page.next;
  }
}

/**
 * Every item of a listing paged by `startAt` (an issue's comments, a create screen's fields), first page to
 * last, through the pagination guard; `urlAt` names the page that starts at an index, `readPage` reads its
 * items and its `total`. An empty page ends the listing whatever `total` says: a server that keeps promising
 * more is not asked forever.
 */
export async function startAtListing<T>(
  site: TrackerSite,
  what: string,
  urlAt: (startAt: number) => string,
  readPage: (response: RestResponse) => { readonly items: readonly T[]; readonly total: unknown },
  from = 0,
): Promise<T[]> {
  const walk = new PageWalk({ server: site.origin, listing: what, pointer: "startAt" });
  const all: T[] = [];
  for (let at = from; ; ) {
    const response = await site.call("GET", urlAt(at));
    if (response.status !== 200) throw site.failure(what, response);
    const { items, total } = readPage(response);
    all.push(...items);
    const next = at + items.length;
    if (items.length === 0 || typeof total !== "number" || next >= total) return all;
    walk.follow(String(next));
    at = next;
  }
}
