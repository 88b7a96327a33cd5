/**
 * The simulator's comment routes, an extension of Document 1 (issue 34; docs/sim.md "Comments"), held to
 * the issues' rules: the same listing (all in one answer, `since` inclusive, `X-Svc-Live-Count`), the same
 * `If-Match` and 409 `version_mismatch`, the same envelopes. The audit row, body limit and rate limit are
 * app.ts's outer layers and so cover these routes as they cover every other.
 *
 * - `GET /projects/<slug>/comments` (`?since=`): every comment of the project.
 * - `GET|POST /projects/<slug>/issues/<id>/comments` (`?since=` on GET): one issue's.
 * - `GET|PATCH|DELETE /projects/<slug>/comments/<cid>`.
 */
import type { IncomingMessage } from "node:http";
import {
  json,
  listingReply,
  methodNotAllowed,
  notFound,
  parseJsonBody,
  type Reply,
  versionMismatch,
} from "./replies.js";
import type { SimStore } from "./store.js";
import { parseCommentInput, parseIfMatch, parseIssueId, parseSince } from "./validate.js";

/** `since` of a listing's query as the store's format, undefined when absent; throws `InvalidRequest`. */
function sinceOf(query: URLSearchParams): string | undefined {
  const since = query.get("since");
  return since === null ? undefined : parseSince(since);
}

/** The 404 of an issue or comment that is not there (or of a path segment that is no id). */
function absent(what: "issue" | "comment", slug: string, idSegment: string, id: number | undefined): Reply {
  return notFound(`no ${what} ${JSON.stringify(idSegment.slice(0, 40))} in project ${slug}`, {
    project: slug,
    ...(id === undefined ? {} : { id }),
  });
}

/** `/projects/<slug>/comments`: GET. */
export function projectCommentsRoute(
  store: SimStore,
  method: string,
  slug: string,
  query: URLSearchParams,
): Reply {
  if (method !== "GET") return methodNotAllowed(method, ["GET"]);
  const since = sinceOf(query);
  if (!store.hasProject(slug)) return notFound(`no project ${slug}`, { project: slug });
  return listingReply(store.comments.count(slug), store.comments.snapshot(slug, { since }));
}

/** `/projects/<slug>/issues/<id>/comments`: GET (optionally `?since=`), POST. */
export function issueCommentsRoute(
  store: SimStore,
  req: IncomingMessage,
  method: string,
  slug: string,
  idSegment: string,
  query: URLSearchParams,
  body: Buffer,
): Reply {
  if (method !== "GET" && method !== "POST") return methodNotAllowed(method, ["GET", "POST"]);
  const id = parseIssueId(idSegment);
  const missing = () => absent("issue", slug, idSegment, id);
  if (method === "GET") {
    const since = sinceOf(query);
    if (id === undefined || store.getIssue(slug, id) === undefined) return missing();
    return listingReply(
      store.comments.count(slug, id),
      store.comments.snapshot(slug, { issueId: id, since }),
    );
  }
  const input = parseCommentInput(parseJsonBody(req, body), "create") as { author: string; body: string };
  const comment = id === undefined ? undefined : store.createComment(slug, id, input);
  return comment ? json(201, comment) : missing();
}

/** `/projects/<slug>/comments/<cid>`: GET, PATCH, DELETE. */
export function commentRoute(
  store: SimStore,
  req: IncomingMessage,
  method: string,
  slug: string,
  idSegment: string,
  body: Buffer,
): Reply {
  if (method !== "GET" && method !== "PATCH" && method !== "DELETE") {
    return methodNotAllowed(method, ["GET", "PATCH", "DELETE"]);
  }
  const id = parseIssueId(idSegment);
  const missing = () => absent("comment", slug, idSegment, id);
  if (method === "GET") {
    const comment = id === undefined ? undefined : store.comments.get(slug, id);
    return comment ? json(200, comment) : missing();
  }
  const changes = method === "PATCH" ? parseCommentInput(parseJsonBody(req, body), "update") : undefined;
  const expected = parseIfMatch(req.headers["if-match"]);
  if (id === undefined) return missing();
  const outcome = changes
    ? store.comments.patch(slug, id, changes.body, expected)
    : store.comments.delete(slug, id, expected);
  if (outcome.kind === "not_found") return missing();
  if (outcome.kind === "version_mismatch") return versionMismatch(outcome.current, expected);
  return "comment" in outcome ? json(200, outcome.comment) : { status: 204 };
}
