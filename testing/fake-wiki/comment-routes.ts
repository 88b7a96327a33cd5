/**
 * The fake wiki's footer-comment routes (v2): a page's comments, the site's, one comment (get, create, update
 * with the version rule, delete for good), a comment's versions; and the accounts: v2 `POST /users-bulk` and
 * v1 `GET /wiki/rest/api/user/current` (v2 has no operation for the calling user).
 *
 * A comment is readable while its page is (current or archived, in a space the account may read); otherwise
 * it answers 404 as the description says. Replies (`parentCommentId`) and comments on blog posts,
 * attachments and custom content are not modelled.
 */
import type { Call } from "./call.js";
import type { Comment } from "./comments.js";
import { currentVersion } from "./comments.js";
import { type Answer, fail, listParam, notModelled, oneOf, parseId, parseJsonObject } from "./http.js";
import { storageBody } from "./page-routes.js";
import { paginate } from "./pagination.js";
import { ACCOUNT_ID, BODY_FORMATS, COMMENT_SORTS, SINGLE_BODY_FORMATS } from "./vendor-data.js";

const READABLE = ["current", "archived"] as const;

/** The comment `rawId` names, when its page is readable; else 404. */
function readableComment(call: Call, rawId: string): Comment {
  const comment = call.store.comments.comments.get(parseId(rawId, "comment"));
  if (!comment) fail(404, "NOT_FOUND", "Not Found");
  call.store.readablePage(comment.pageId, READABLE);
  return comment;
}

/** `body-format` of a listing (storage or atlas_doc_format), or null. */
function listBodyFormat(params: URLSearchParams): string | null {
  const bodyFormat = params.get("body-format");
  if (bodyFormat !== null) oneOf(bodyFormat, BODY_FORMATS, "body-format");
  return bodyFormat;
}

/** One result page of `comments`, sorted as `sort` asks (by id when it names nothing). */
function commentListing(call: Call, comments: readonly Comment[]): Answer {
  const { url, shapes } = call;
  const params = url.searchParams;
  const sort = params.get("sort");
  const field = sort === null ? "id" : oneOf(sort.replace(/^-/, ""), COMMENT_SORTS, "sort");
  const bodyFormat = listBodyFormat(params);
  const { page, next } = paginate(
    comments,
    params,
    sort ?? "id",
    (comment) =>
      field === "id"
        ? Number(comment.id)
        : field === "created-date"
          ? (comment.versions[0]?.createdAt ?? "")
          : currentVersion(comment).createdAt,
    (comment) => Number(comment.id),
  );
  return shapes.listing(
    url,
    page.map((comment) => shapes.comment(comment, bodyFormat, false)),
    next,
  );
}

/** `GET /pages/{id}/footer-comments`: the page's (root) footer comments. */
export function listPageComments(call: Call, rawPageId: string): Answer {
  const page = call.store.readablePage(parseId(rawPageId, "page"), READABLE);
  const statuses = listParam(call.url.searchParams, "status");
  // Comments here are all current; asking for other statuses finds none of them.
  if (statuses.some((status) => status !== "current"))
    notModelled("footer comments in a status other than current");
  return commentListing(call, call.store.comments.ofPage(page.id));
}

/**
 * `GET /footer-comments`: every footer comment the account may read, site-wide.
 * ASSUMPTION: "all footer comments" are those on pages the account can read (current or archived, not in
 * the trash), in every space; the description has no filter by space or page and no `since`.
 */
export function listComments(call: Call): Answer {
  const { store } = call;
  const readable = [...store.comments.comments.values()].filter((comment) => {
    const page = store.pages.get(comment.pageId);
    const space = page ? store.spaceById(page.spaceId) : undefined;
    return page !== undefined && page.status !== "trashed" && space !== undefined && !space.denied;
  });
  return commentListing(call, readable);
}

export function getComment(call: Call, rawId: string): Answer {
  const params = call.url.searchParams;
  const bodyFormat = params.get("body-format");
  if (bodyFormat !== null) oneOf(bodyFormat, SINGLE_BODY_FORMATS, "body-format");
  if (params.has("version")) notModelled("?version=: ask /footer-comments/{id}/versions");
  for (const include of ["include-properties", "include-operations", "include-likes", "include-versions"]) {
    if (params.get(include) === "true") notModelled(`?${include}=true`);
  }
  const comment = readableComment(call, rawId);
  return { status: 200, body: call.shapes.comment(comment, bodyFormat, true) };
}

/** The comment body a write sends: storage, and not empty. */
function commentBody(body: unknown): string {
  if (body === undefined) fail(400, "INVALID_REQUEST_PARAMETER", "'body' is required");
  const value = storageBody(body);
  // ASSUMPTION: the product refuses an empty comment (its editor does not let one be saved).
  if (value.trim() === "") fail(400, "INVALID_REQUEST_PARAMETER", "A comment body must not be empty");
  return value;
}

/** `POST /footer-comments` with `{pageId, body}`: a top-level comment on a page, by the account. */
export function createCommentRequest(call: Call): Answer {
  const { store } = call;
  const input = parseJsonObject(call.text, call.contentType);
  for (const other of ["blogPostId", "parentCommentId", "attachmentId", "customContentId"]) {
    if (input[other] !== undefined) notModelled(`a footer comment with ${other}`);
  }
  if (typeof input.pageId !== "string" && typeof input.pageId !== "number")
    fail(400, "INVALID_REQUEST_PARAMETER", "'pageId' is required");
  const page = store.readablePage(parseId(String(input.pageId), "page"), ["current"]);
  const body = commentBody(input.body);
  const comment = store.comments.insert(page.id, body, ACCOUNT_ID, store.stamp());
  return {
    status: 201,
    headers: { location: `/wiki/api/v2/footer-comments/${comment.id}` },
    body: call.shapes.comment(comment, "storage", true),
  };
}

/**
 * `PUT /footer-comments/{id}` with `{version: {number}, body}`: the version must be the current one + 1, else
 * 409 as for pages (the description lists no 409; the page's is recorded). ASSUMPTION: as in the product's
 * editor, only the comment's author may edit it; anyone else is answered 404 ("forbidden from updating a
 * comment tied to a resource they are allowed to view").
 */
export function updateCommentRequest(call: Call, rawId: string): Answer {
  const { store } = call;
  const comment = readableComment(call, rawId);
  const input = parseJsonObject(call.text, call.contentType);
  const version = input.version as { number?: unknown; message?: unknown } | null | undefined;
  if (version === null || typeof version !== "object" || !Number.isInteger(version.number))
    fail(400, "INVALID_REQUEST_PARAMETER", "'version.number' must be an integer");
  const body = commentBody(input.body);
  const current = currentVersion(comment).number;
  if (version.number !== current + 1) {
    fail(
      409,
      "CONFLICT",
      `Version must be incremented when updating a comment. Current Version: [${current}]. ` +
        `Provided version: [${String(version.number)}]`,
    );
  }
  if (comment.versions[0]?.authorId !== ACCOUNT_ID) fail(404, "NOT_FOUND", "Not Found");
  const message = typeof version.message === "string" ? version.message : "";
  store.comments.edit(comment, body, ACCOUNT_ID, store.stamp(), message);
  return { status: 200, body: call.shapes.comment(comment, "storage", false) };
}

/** `DELETE /footer-comments/{id}`: for good (the description: "cannot be reverted"). */
export function deleteCommentRequest(call: Call, rawId: string): Answer {
  const comment = readableComment(call, rawId);
  call.store.comments.comments.delete(comment.id);
  return { status: 204 };
}

/** `GET /footer-comments/{id}/versions`. ASSUMPTION: newest first unless `sort=modified-date`. */
export function listCommentVersions(call: Call, rawId: string): Answer {
  const { url, shapes } = call;
  const comment = readableComment(call, rawId);
  const sort = oneOf(
    url.searchParams.get("sort") ?? "-modified-date",
    ["modified-date", "-modified-date"],
    "sort",
  );
  if (listBodyFormat(url.searchParams) !== null) notModelled("body-format on a comment's versions");
  const { page, next } = paginate(
    comment.versions,
    url.searchParams,
    sort,
    (version) => version.createdAt,
    (version) => version.number,
  );
  return shapes.listing(
    url,
    page.map((version) => ({ ...version })),
    next,
  );
}

/** v2 `POST /users-bulk` with `{accountIds}` (1 to 250): the accounts it knows, in the order asked. */
export function bulkUsersRequest(call: Call): Answer {
  const input = parseJsonObject(call.text, call.contentType);
  const ids = input.accountIds;
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > 250 || ids.some((id) => typeof id !== "string"))
    fail(400, "INVALID_REQUEST_PARAMETER", "'accountIds' must list 1 to 250 account ids");
  const users = call.store.comments.users;
  const results = [...new Set(ids as string[])].flatMap((id) => {
    const name = users.get(id);
    return name === undefined ? [] : [call.shapes.user(id, name)];
  });
  return { status: 200, body: { results, _links: {} } };
}

/** v1 `GET /wiki/rest/api/user/current`: the configured account, in v1's User shape. */
export function currentUser(call: Call): Answer {
  const name = call.store.comments.users.get(ACCOUNT_ID) ?? "";
  return {
    status: 200,
    body: {
      type: "known",
      accountId: ACCOUNT_ID,
      accountType: "atlassian",
      email: "",
      publicName: name,
      displayName: name,
      profilePicture: { path: "/wiki/aa-avatar/default.png", width: 48, height: 48, isDefault: true },
      isExternalCollaborator: false,
      _links: {
        self: `/wiki/rest/api/user?accountId=${encodeURIComponent(ACCOUNT_ID)}`,
        base: call.shapes.linksBase,
      },
    },
  };
}
