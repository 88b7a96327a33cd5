/**
 * The wiki's one paginated walk (Document 3 "Pagination rules"): the `results` of a listing and of every
 * result page after it, following `_links.next` joined to the tenant base URL, never `_links.base` (a server
 * could point it anywhere: request forgery). Every next URL still passes the egress allowlist (the HTTP
 * client), and goes through the pagination guard (core/pagination.ts: a repeated one, or too many, is an
 * error). The pages listings and the footer-comment listings walk with it.
 */
import { isObject } from "../../core/checks.js";
import { excerpt, SvcError } from "../../core/errors.js";
import { PageWalk } from "../../core/pagination.js";
import { type RestClient, type RestResponse, UnexpectedShapeError } from "../rest.js";

/** The most the vendor serves per page of results. */
export const PAGE_LIMIT = 250;

/** What a wiki request needs: the tenant, how to name it in messages, and one request on it. */
export interface WikiSite {
  /** The tenant base URL, no path: `https://acme.atlassian.net`. */
  readonly baseUrl: string;
  /** `wiki space DOCS at https://…`: the start of a message about an answer. */
  readonly description: string;
  readonly rest: RestClient;
  /** One request to `path` (from `/wiki/…`) on the tenant; a 401 or 403 throws. */
  call(method: string, path: string, body?: unknown): Promise<RestResponse>;
}

/**
 * The `results` of `first` and of every result page after it, following `_links.next` from the tenant
 * base. A `_links.next` seen before in the walk, or more than `SVC_MAX_RESULT_PAGES` result pages, ends
 * it with a `PaginationError` (core/pagination.ts).
 */
export async function* paginate(site: WikiSite, first: string, what: string): AsyncGenerator<unknown> {
  const walk = new PageWalk({
    server: new URL(site.baseUrl).origin,
    listing: what,
    pointer: "_links.next",
    first,
  });
  let path = first;
  for (;;) {
    const response = await site.call("GET", path);
    if (response.status !== 200) throw site.rest.failure(what, response);
    const value = site.rest.parse(what, response);
    if (!isObject(value) || !Array.isArray(value.results)) {
      throw new UnexpectedShapeError(
        `${site.description}: ${what} answered ${response.status} without a results list`,
        response.status,
      );
    }
    yield* value.results;
    const next: unknown = isObject(value._links) ? value._links.next : undefined;
    if (typeof next !== "string" || next === "") return;
    if (!next.startsWith("/")) {
      throw new SvcError(
        "SVC_BACKEND",
        `${site.description}: ${what}: _links.next is not a path on this site: ${excerpt(next, 100)}`,
      );
    }
    walk.follow(next);
    // Joined to the tenant base URL by `call`, never to `_links.base`.
    path = next;
  }
}
