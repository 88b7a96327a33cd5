/**
 * The fake tracker's search routes: `search/jql` (POST body or GET query, validated as Jira's description has
 * them, answered one page at a time) and `search/approximate-count`. A query Jira's parser refuses answers 400
 * with its message.
 */
import { type Call, queryList } from "./call.js";
import { type Answer, errorCollection, fail, isStringArray, parseJsonObject } from "./http.js";
import { JqlError } from "./jql.js";
import type { Search, SearchRequest } from "./search.js";
import { selectFields } from "./shapes.js";
import { DEFAULT_MAX_RESULTS } from "./vendor-data.js";

const SEARCH_MEMBERS: ReadonlyMap<string, (value: unknown) => boolean> = new Map<
  string,
  (value: unknown) => boolean
>([
  ["jql", (value) => typeof value === "string"],
  ["nextPageToken", (value) => typeof value === "string"],
  ["maxResults", Number.isInteger],
  ["fields", isStringArray],
  ["expand", (value) => typeof value === "string"],
  ["properties", isStringArray],
  ["fieldsByKeys", (value) => typeof value === "boolean"],
  ["failFast", (value) => typeof value === "boolean"],
  ["reconcileIssues", (value) => Array.isArray(value) && value.every(Number.isInteger)],
]);

/**
 * The SearchAndReconcileRequestBean (`additionalProperties: false`). ASSUMPTION: an unknown member or a value of
 * the wrong type answers 400, with wordings of our own; `null` counts as absent; `expand`, `properties`,
 * `fieldsByKeys`, `failFast` and `reconcileIssues` are accepted and change nothing (the fake has no rendered
 * fields, issue properties or eventual consistency).
 */
export function searchBody(text: string): SearchRequest {
  const body = parseJsonObject(text);
  for (const [name, value] of Object.entries(body)) {
    const valid = SEARCH_MEMBERS.get(name);
    if (!valid) fail(400, `Unrecognized field "${name}" in the search request.`);
    if (value !== null && !valid(value)) fail(400, `Invalid value for "${name}" in the search request.`);
  }
  const fields = isStringArray(body.fields) ? body.fields : [];
  return searchRequest(
    typeof body.jql === "string" ? body.jql : "",
    typeof body.nextPageToken === "string" ? body.nextPageToken : undefined,
    typeof body.maxResults === "number" ? body.maxResults : undefined,
    fields,
  );
}

export function searchQuery(url: URL): SearchRequest {
  const raw = url.searchParams.get("maxResults");
  const maxResults = raw === null ? undefined : Number(raw);
  if (maxResults !== undefined && !Number.isInteger(maxResults))
    fail(400, `Invalid value for "maxResults": ${raw}`);
  return searchRequest(
    url.searchParams.get("jql") ?? "",
    url.searchParams.get("nextPageToken") ?? undefined,
    maxResults,
    queryList(url, "fields"),
  );
}

function searchRequest(
  jql: string,
  nextPageToken: string | undefined,
  maxResults: number | undefined,
  fields: readonly string[],
): SearchRequest {
  // ASSUMPTION: the wording; Jira documents the default (50) but no error for a non-positive value.
  if (maxResults !== undefined && maxResults < 1) fail(400, "maxResults must be at least 1.");
  return {
    jql,
    nextPageToken,
    maxResults: maxResults ?? DEFAULT_MAX_RESULTS,
    selection: selectFields(fields, "id"),
  };
}

export function runSearch(call: Call, request: SearchRequest): Answer {
  let page: ReturnType<Search["page"]>;
  try {
    page = call.search.page(request);
  } catch (error) {
    if (!(error instanceof JqlError)) throw error;
    return errorCollection(400, [error.message]);
  }
  const issues = page.issues.map((issue) => call.shapes.issue(issue, request.selection));
  const body =
    page.nextPageToken === undefined
      ? { issues, isLast: true }
      : { issues, nextPageToken: page.nextPageToken, isLast: false };
  return { status: 200, body };
}

/**
 * `POST /rest/api/3/search/approximate-count`: a JQLCountRequestBean, whose only member is `jql`
 * (`additionalProperties: false`). ASSUMPTION: an unknown member or a `jql` that is not a string answers 400 with
 * wordings of our own, as for search/jql; a missing one is the empty, unbounded query.
 */
export function countIssues(call: Call): Answer {
  const body = parseJsonObject(call.text);
  for (const [name, value] of Object.entries(body)) {
    if (name !== "jql") fail(400, `Unrecognized field "${name}" in the count request.`);
    if (value !== null && typeof value !== "string")
      fail(400, 'Invalid value for "jql" in the count request.');
  }
  try {
    return { status: 200, body: { count: call.search.count(typeof body.jql === "string" ? body.jql : "") } };
  } catch (error) {
    if (!(error instanceof JqlError)) throw error;
    return errorCollection(400, [error.message]);
  }
}
