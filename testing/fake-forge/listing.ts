/**
 * The fake forge's listings of issues and of comments: their queries (`state`, `sort`, `direction`, `since`,
 * `labels`, `per_page`, `page`) validated, the issues or comments they select in order, and the `Link` header
 * of one result page (absolute URLs in the `/repositories/{id}/…` form GitHub writes).
 */
import { invalid } from "./http.js";
import type { Comment, Issue, Repo } from "./store.js";
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from "./vendor-data.js";

/** The query of a listing, validated; bad enum values answer 422 (ASSUMPTION: GitHub's wording for them varies). */
export interface ListQuery {
  readonly state: "open" | "closed" | "all";
  readonly sort: "created" | "updated" | "comments";
  readonly direction: "asc" | "desc";
  readonly sinceMs: number | undefined;
  readonly labels: readonly string[];
  readonly perPage: number;
  readonly page: number;
}

function enumParam<T extends string>(
  params: URLSearchParams,
  name: string,
  allowed: readonly T[],
  docs: string,
): T {
  const value = params.get(name) ?? allowed[0];
  if (!allowed.includes(value as T)) invalid(docs, { code: "invalid", field: name, value });
  return value as T;
}

/** A positive integer parameter; anything else means the default. ASSUMPTION: GitHub ignores junk here. */
function countParam(params: URLSearchParams, name: string, fallback: number): number {
  const raw = params.get(name);
  return raw !== null && /^\d{1,9}$/.test(raw) && Number(raw) > 0 ? Number(raw) : fallback;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** `since`, an ISO 8601 time, as ms; a malformed one answers 422. */
function parseSince(params: URLSearchParams, docs: string): number | undefined {
  const since = params.get("since");
  if (since !== null && (!ISO_8601.test(since) || Number.isNaN(Date.parse(since)))) {
    invalid(docs, { code: "invalid", field: "since", value: since });
  }
  return since === null ? undefined : Date.parse(since);
}

export function parseListQuery(params: URLSearchParams, docs: string): ListQuery {
  return {
    state: enumParam(params, "state", ["open", "closed", "all"], docs),
    sort: enumParam(params, "sort", ["created", "updated", "comments"], docs),
    direction: enumParam(params, "direction", ["desc", "asc"], docs),
    sinceMs: parseSince(params, docs),
    labels: (params.get("labels") ?? "")
      .split(",")
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== ""),
    perPage: Math.min(countParam(params, "per_page", DEFAULT_PER_PAGE), MAX_PER_PAGE),
    page: countParam(params, "page", 1),
  };
}

function sortKey(issue: Issue, sort: ListQuery["sort"]): number {
  if (sort === "updated") return issue.updatedMs;
  // Nobody comments in this fake, so sort=comments orders by number alone.
  if (sort === "comments") return 0;
  return issue.createdMs;
}

/**
 * The issues a listing selects, sorted; ties broken by number in the same direction. The reference says `since`
 * keeps issues "updated after the given time"; ASSUMPTION: an issue updated exactly then is kept too.
 */
export function selectIssues(repo: Repo, query: ListQuery): Issue[] {
  const sign = query.direction === "asc" ? 1 : -1;
  return [...repo.issues.values()]
    .filter((issue) => query.state === "all" || issue.state === query.state)
    .filter((issue) => query.sinceMs === undefined || issue.updatedMs >= query.sinceMs)
    .filter((issue) => query.labels.every((name) => issue.labels.some((l) => l.toLowerCase() === name)))
    .sort((a, b) => sign * (sortKey(a, query.sort) - sortKey(b, query.sort) || a.number - b.number));
}

/** The query of a comments listing (repository-wide or one issue's), validated as an issue listing's. */
export interface CommentQuery {
  readonly sort: "created" | "updated";
  readonly direction: "asc" | "desc";
  readonly sinceMs: number | undefined;
  readonly perPage: number;
  readonly page: number;
}

/**
 * "List issue comments for a repository" (`sort` created|updated, default created; `direction` "ignored
 * without the sort parameter") and "List issue comments" (`since`, paging only). ASSUMPTION: without `sort`,
 * or without `direction`, the order is ascending, as GitHub's "By default, issue comments are ordered by
 * ascending ID".
 */
export function parseCommentQuery(params: URLSearchParams, docs: string): CommentQuery {
  const sorted = params.has("sort");
  return {
    sort: enumParam(params, "sort", ["created", "updated"], docs),
    direction: sorted ? enumParam(params, "direction", ["asc", "desc"], docs) : "asc",
    sinceMs: parseSince(params, docs),
    perPage: Math.min(countParam(params, "per_page", DEFAULT_PER_PAGE), MAX_PER_PAGE),
    page: countParam(params, "page", 1),
  };
}

/** The comments a listing selects (`since` inclusive, as for issues), sorted; ties broken by id. */
export function selectComments(comments: Iterable<Comment>, query: CommentQuery): Comment[] {
  const sign = query.direction === "asc" ? 1 : -1;
  const key = (comment: Comment) => (query.sort === "updated" ? comment.updatedMs : comment.createdMs);
  return [...comments]
    .filter((comment) => query.sinceMs === undefined || comment.updatedMs >= query.sinceMs)
    .sort((a, b) => sign * (key(a) - key(b) || a.id - b.id));
}

/**
 * The `Link` header of one result page: absolute URLs in the `/repositories/{id}<path>` form (`path` the
 * listing's, `/issues` unless given), the request's query with `page` replaced; `prev`/`next`/`last`/`first`
 * where they apply (none when there is one page).
 */
export function linkHeader(
  origin: string,
  nextOrigin: string,
  repo: Repo,
  url: URL,
  page: number,
  last: number,
  path = "/issues",
): string | undefined {
  const at = (base: string, target: number) => {
    const params = new URLSearchParams(url.searchParams);
    params.set("page", String(target));
    return `<${base}/repositories/${repo.id}${path}?${params.toString()}>`;
  };
  const links: string[] = [];
  if (page > 1) links.push(`${at(origin, Math.min(page - 1, last))}; rel="prev"`);
  if (page < last) links.push(`${at(nextOrigin, page + 1)}; rel="next"`, `${at(origin, last)}; rel="last"`);
  if (page > 1) links.push(`${at(origin, 1)}; rel="first"`);
  return links.length === 0 ? undefined : links.join(", ");
}
